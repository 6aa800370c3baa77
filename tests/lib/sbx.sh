# tests/lib/sbx.sh - set-up shared by the integration tests that drive sbx
# as root and as nobody (bash; source it after tap.sh):
#
#   . "$(dirname "$0")/../lib/tap.sh"
#   . "$(dirname "$0")/../lib/sbx.sh"
#
#   sbx_modes                MODES="root user" and UID_U=65534 as root;
#                            MODES="user" and UID_U=$(id -u) otherwise
#   sbx_base                 BASE=$TAP_TMP/base (mode 0777, so nobody can
#                            write it) and SBX=$BASE/sbx, a private copy
#                            that nobody can run
#   sbx_rootfs OUT [SRC:DEST ...]
#                            the busybox rootfs tarball (tests/lib/mkrootfs.sh),
#                            mode 0644; bails out if it cannot be built
#   sbx_wd                   WD=$BASE/wd, mode 0777
#   sbx_as_mode MODE CMD...  CMD as root (MODE root) or as nobody through
#                            setpriv (as the caller when not root), with a
#                            clean environment, each with private state and
#                            cache dirs under $BASE
#   sbx_as_dirs MODE STATE CACHE CMD...
#                            the same with those state and cache dirs
#   sbx_as_mode_in DIR MODE CMD...
#                            the same in a subshell whose cwd is DIR
#   sbx_host_base            HOST_BASE: as root, the host uid of a jail's
#                            root (100000, or above every /etc/subuid range)
#   sbx_setup_busybox        sbx_modes, sbx_base, IMG=$BASE/busybox.tar.gz
#                            (sbx_rootfs) and sbx_wd: what most tests start with
#   sbx_proxy_port ERRFILE   the port an `sbx proxy --listen 127.0.0.1:0`
#                            printed to ERRFILE ("listening on ..."), waiting
#                            up to 5 s for it; empty if none
#   sbx_ca_profiles          in $BASE (after sbx_base), mode 0644: up.pem, a
#                            test CA (openssl); proxy.ini (proxy mode,
#                            api.sbx.test allowed, persist = never); up.ini,
#                            the same trusting up.pem (upstream-ca); and
#                            inject.ini, that and API_KEY from $SBX_T_KEY
#                            injected for api.sbx.test; 1 if openssl failed

sbx_modes() {
	if [ "$(id -u)" -eq 0 ]; then
		MODES="root user"
		UID_U=65534
	else
		MODES="user"
		UID_U=$(id -u)
	fi
}

sbx_base() {
	BASE=$TAP_TMP/base
	mkdir -p "$BASE" && chmod 0777 "$BASE"
	# A private copy: a parallel `make` must not swap the binary mid-test.
	cp "$SBX" "$BASE/sbx" && chmod 0755 "$BASE/sbx" && SBX=$BASE/sbx
}

sbx_rootfs() {
	"$TAP_ROOT/tests/lib/mkrootfs.sh" "$@" >/dev/null || {
		echo "Bail out! mkrootfs failed"
		exit 1
	}
	chmod 0644 "$1"
}

sbx_wd() {
	WD=$BASE/wd
	mkdir -p "$WD" && chmod 0777 "$WD"
}

# sbx_sandbox_entries DIR: what STATE/sandboxes (DIR) holds but the ready
# directories sbx keeps made for the next runs (.ready-N) and the one a
# purger may be making right after a run returned (.new-ready-PID-N,
# renamed to .ready-N once made).
sbx_sandbox_entries() {
	ls -A "$1" 2>/dev/null | grep -Ev '^\.ready-[0-9]$|^\.new-ready-[0-9]+-[0-9]+$'
}

sbx_as_mode() {
	local mode=$1
	shift
	sbx_as_dirs "$mode" "$BASE/state-$mode" "$BASE/cache-$mode" "$@"
}

sbx_as_dirs() {
	local mode=$1 state=$2 cache=$3
	shift 3
	if [ "$mode" = root ]; then
		env SBX_STATE_DIR="$state" SBX_CACHE_DIR="$cache" "$@"
	elif [ "$(id -u)" -ne 0 ]; then
		# Not root: the unprivileged half is the caller itself.
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" \
			SBX_STATE_DIR="$state" SBX_CACHE_DIR="$cache" "$@"
	else
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" \
			SBX_STATE_DIR="$state" SBX_CACHE_DIR="$cache" "$@"
	fi
}

sbx_as_mode_in() {
	local dir=$1
	shift
	(cd "$dir" && sbx_as_mode "$@")
}

sbx_setup_busybox() {
	sbx_modes
	sbx_base
	IMG=$BASE/busybox.tar.gz
	sbx_rootfs "$IMG"
	sbx_wd
}

sbx_host_base() {
	HOST_BASE=$("$SBX" doctor --json 2>/dev/null | jq -r '.host_base // empty')
	[ -n "$HOST_BASE" ] || HOST_BASE=100000
}

sbx_proxy_port() {
	for _ in $(seq 50); do grep -q '^listening on' "$1" && break; sleep 0.1; done
	sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$1"
}

sbx_ca_profiles() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-subj "/CN=sbx test upstream" -days 2 -keyout "$BASE/up.key" -out "$BASE/up.pem" \
		>/dev/null 2>&1 || return 1
	printf '[sandbox]\npersist = never\n[network]\nmode = proxy\nallow = api.sbx.test\n' \
		>"$BASE/proxy.ini"
	{ cat "$BASE/proxy.ini" && echo "upstream-ca = $BASE/up.pem"; } >"$BASE/up.ini"
	{ cat "$BASE/up.ini" && printf '[secrets]\nAPI_KEY = env:SBX_T_KEY inject api.sbx.test\n'; } \
		>"$BASE/inject.ini"
	chmod 0644 "$BASE/up.pem" "$BASE/proxy.ini" "$BASE/up.ini" "$BASE/inject.ini"
}
