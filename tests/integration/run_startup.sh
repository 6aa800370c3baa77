#!/bin/bash
# tests/integration/run_startup.sh - what keeps `sbx run`'s start-up short,
# checked as properties (timings are bench/startup.sh's job, as ratios):
# libarchive and libcrypto are not linked (dlopen()ed on first use) and a
# run from a cached image never loads them; the jail's overlays are
# "volatile" (no sync of the state disk when the jail ends); a kept
# sandbox's layer loses the overlay's volatile marker (so `sbx exec` can
# mount it again) and keeps what the jail wrote; an ephemeral run leaves
# no sandbox directory; init starts the command with a clone that shares
# its memory until the execve (CLONE_VM | CLONE_VFORK).  As root and as
# nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_base
IMG=$BASE/busybox.tar.gz
sbx_rootfs "$IMG"
sbx_wd

if command -v readelf >/dev/null; then
	needed=$(readelf -d "$SBX" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	! grep -qE 'libarchive|libcrypto|libxml2|libicu' <<<"$needed"
	ok $? "sbx is not linked against libarchive or libcrypto (NEEDED: $needed)"
else
	skip "sbx is not linked against libarchive or libcrypto" "no readelf"
fi

as_mode() {
	local mode=$1
	shift
	if [ "$mode" != user ]; then
		(cd "$WD" && env HOME="$BASE/home-$mode" SBX_STATE_DIR="$BASE/state-$mode" \
			SBX_CACHE_DIR="$BASE/cache-$mode" "$@")
	else
		(cd "$WD" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env HOME="$BASE/home-user" SBX_STATE_DIR="$BASE/state-user" \
			SBX_CACHE_DIR="$BASE/cache-user" "$@")
	fi
}

# As root: root, then nobody through setpriv; as anyone else: themselves.
if [ "$(id -u)" -eq 0 ]; then
	modes="root user"
	mkdir -p "$BASE/home-root" "$BASE/home-user" && chown 65534:65534 "$BASE/home-user"
else
	modes="self"
	mkdir -p "$BASE/home-self"
fi

for mode in $modes; do
	# First use unpacks (libarchive loaded then); the second finds the cache.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- /bin/true
	ok $rc "$mode: a first run unpacks the image ($rc: $err)"

	as_mode $mode "$SBX" run -q --name "maps-$mode-$$" --rootfs "$IMG" -- /bin/sleep 2 &
	pid=$!
	maps=""
	for i in $(seq 60); do
		sup=$(pgrep -f "run -q --name maps-$mode-$$ " | head -n 1)
		# sbx itself (not the setpriv before it), with its jail started;
		# a static-pie sbx maps no shared library until it dlopen()s one
		if [ -n "$sup" ] && pgrep -P "$sup" >/dev/null &&
			grep -q " $(readlink -f "$SBX")\$" /proc/$sup/maps 2>/dev/null; then
			maps=$(cat /proc/$sup/maps)
			break
		fi
		sleep 0.05
	done
	wait $pid
	if [ -z "$maps" ]; then
		skip "$mode: a run from the cached image does not load libarchive or libcrypto" \
			"could not read the supervisor's maps"
	else
		! grep -qE 'libarchive|libcrypto' <<<"$maps"
		ok $? "$mode: a run from the cached image does not load libarchive or libcrypto"
	fi

	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'grep " overlay " /proc/mounts'
	n_ovl=$(lines "$out")
	n_vol=$(grep -c 'volatile' <<<"$out")
	[ "$rc" -eq 0 ] && [ "$n_ovl" -ge 1 ] && [ "$n_vol" -eq "$n_ovl" ]
	ok $? "$mode: the jail's overlays are volatile ($n_vol of $n_ovl)"

	# The command is a clone sharing init's memory until its execve (no
	# copy of init's page tables, nothing to tear down at the execve):
	# the clone that execs the command has CLONE_VM and CLONE_VFORK.
	if command -v strace >/dev/null; then
		f=$TAP_TMP/cmd-$mode
		touch "$f" && chmod 0666 "$f"
		as_mode $mode strace -f -qq -e trace=clone,clone3,fork,vfork,execve -o "$f" \
			"$SBX" run -q --rootfs "$IMG" -- /bin/echo spawned >/dev/null
		# init: the pid the jail's clone (CLONE_NEWPID) returned (strace
		# pads a pid to 5 columns: "6709  clone(", "16709 clone(")
		init=$(sed -n 's/^[0-9]* *clone(.*CLONE_NEWPID.* = \([0-9]*\)$/\1/p' "$f" | head -n 1)
		how=$(grep -E "^$init +(clone|clone3|fork|vfork)\(" "$f" | head -n 1)
		r=1
		# (as nobody strace cannot read the command's execve arguments)
		case "$how" in *CLONE_VM*CLONE_VFORK*) [ "$(grep -c ' execve(' "$f")" -ge 2 ] && r=0 ;; esac
		ok $r "$mode: init starts the command with a clone sharing its memory until the execve (${how#* })"
	else
		skip "$mode: init starts the command with CLONE_VM | CLONE_VFORK" "strace is not installed (tests/deps.sh)"
	fi

	# As root, a run whose profile does not use $USER reads no user
	# database (a passwd lookup cost 0.2 ms of each start); an ordinary
	# user's run looks its name up in /etc/subuid, so it reads it.
	if [ "$mode" = root ] && command -v strace >/dev/null; then
		f=$TAP_TMP/pw-$mode
		as_mode $mode strace -qq -e trace=open,openat -o "$f" "$SBX" run -q --rootfs "$IMG" -- /bin/true
		! grep -qE '"/etc/(passwd|nsswitch\.conf)"' "$f"
		ok $? "$mode: the default profile's run reads no user database ($(grep -cE '"/etc/(passwd|nsswitch\.conf)"' "$f") opens)"
	fi

	ls "$BASE/state-$mode/sandboxes" 2>/dev/null | grep -q .
	[ $? -ne 0 ]
	ok $? "$mode: ephemeral runs left no sandbox directory"

	capture as_mode $mode "$SBX" run -q --name "kept-$mode" --rootfs "$IMG" -- \
		sh -c 'echo layer > /written; echo cwd > ./cwd-file; exit 3'
	sbdir=$(ls -d "$BASE/state-$mode/sandboxes/"*/ 2>/dev/null | head -n 1)
	# The layers: as root an ext4 image (disk.img, looked at read-only
	# here), unprivileged copied from the jail's tmpfs to disk/.
	layer=${sbdir}disk
	if [ -f "${sbdir}disk.img" ]; then
		layer=$TAP_TMP/layer-$mode
		mkdir -p "$layer" && mount -o loop,ro "${sbdir}disk.img" "$layer"
	fi
	[ "$rc" -eq 3 ] && [ -n "$sbdir" ] && [ -z "$(find "$sbdir" "$layer" -name incompat 2>/dev/null)" ] &&
		[ "$(cat "$layer/upper/written" 2>/dev/null)" = layer ]
	ok $? "$mode: a kept sandbox's layer has what the jail wrote and no volatile marker"
	[ "$layer" = "$TAP_TMP/layer-$mode" ] && umount "$layer"

	capture as_mode $mode "$SBX" exec "kept-$mode" -- cat /written
	[ "$rc" -eq 0 ] && [ "$out" = layer ]
	ok $? "$mode: sbx exec mounts the kept layer again ($rc: $out $err)"
	as_mode $mode "$SBX" destroy "kept-$mode" >/dev/null 2>&1
done

[ ! -e "$WD/cwd-file" ]
ok $? "the working directory on the host was not written"

done_testing
