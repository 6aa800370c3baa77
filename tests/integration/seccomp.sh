#!/bin/bash
# tests/integration/seccomp.sh - seccomp policies of `sbx run`, as root and
# as an unprivileged user: the static probe (tests/escape/seccomp_probe)
# inside a busybox jail under default and strict; strict still running a
# shell and busybox tools; a custom policy file applied (and the copy a
# hostile image plants at the same path ignored); a bad policy file is an
# error naming file:line, exit 125 for run and 1 for profile check.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (runs the unprivileged half through setpriv)"
	exit 77
fi

PROBE=$TAP_ROOT/tests/escape/seccomp_probe
if [ ! -x "$PROBE" ]; then
	make -s -C "$TAP_ROOT" tests/escape/seccomp_probe >/dev/null || {
		echo "Bail out! cannot build $PROBE"
		exit 1
	}
fi

BASE=$TAP_TMP/base
mkdir -p "$BASE" && chmod 0777 "$BASE"
# Policies live outside /tmp and /var/tmp (tmpfs in the jail, which would
# hide the planted copy), and outside the jail's working directory.
mkdir -p "$TAP_ROOT/tests/out"
POL=$(mktemp -d "$TAP_ROOT/tests/out/seccomp-policy.XXXXXX") && chmod 0755 "$POL" || exit 1
trap 'tap_cleanup "$POL"' EXIT
# The policy the profile names, and a permissive one the image plants at
# the same path: the jail must get the host's.
printf '# test policy\ndeny mkdir EACCES\ndeny mkdirat EACCES   # both\n' >"$POL/p.policy"
printf 'base none\n' >"$BASE/evil.policy"
IMG=$BASE/probe.tar.gz
"$TAP_ROOT/tests/lib/mkrootfs.sh" "$IMG" "$PROBE:/bin/seccomp_probe" \
	"$BASE/evil.policy:$POL/p.policy" >/dev/null || {
	echo "Bail out! mkrootfs failed"
	exit 1
}
chmod 0644 "$IMG" "$POL/p.policy"
printf '[sandbox]\nextends = default\n[security]\nseccomp = %s\n' "$POL/p.policy" >"$BASE/custom.ini"
printf 'deny mount\nallow mkdirr\n' >"$POL/bad.policy"
printf '[sandbox]\nextends = default\n[security]\nseccomp = %s\n' "$POL/bad.policy" >"$BASE/bad.ini"
chmod 0644 "$BASE"/*.ini "$POL/bad.policy"

as_mode() { sbx_as_mode_in "$BASE" "$@"; }

# A kernel that takes no i386 system call (int 0x80 faults on the host
# too, with no filter): the probe skips those checks, saying why.
NO80=
if ! int80=$("$PROBE" --int80-works); then
	NO80=--no-int80
	diag "the host: $int80; the int 0x80 checks are skipped"
fi

for mode in root user; do
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- /bin/seccomp_probe $NO80
	ok $rc "$mode: default policy: probe exits 0"
	printf '%s\n' "$out" | grep -qE '^seccomp_probe: [0-9]+ attacks, ([0-9]+) contained, 0 escaped, 0 failed$'
	ok $? "$mode: default policy: nothing escaped ($(printf '%s\n' "$out" | tail -1))"
	[ "$(printf '%s\n' "$out" | grep -c '^contained ')" -ge 80 ]
	ok $? "$mode: default policy: at least 80 attacks contained"
	printf '%s\n' "$out" | grep -qx 'contained x32 syscall (getpid | 0x40000000)'
	ok $? "$mode: default policy: x32 syscalls kill the caller"
	if [ -z "$NO80" ]; then
		printf '%s\n' "$out" | grep -qx 'contained int 0x80 syscall (i386 getpid)'
		ok $? "$mode: default policy: int 0x80 syscalls kill the caller"
	else
		skip "$mode: default policy: int 0x80 syscalls kill the caller" "this kernel takes none ($int80)"
	fi
	printf '%s\n' "$out" | grep -qx 'contained unfiltered thread (Seccomp: 2 in every thread)'
	ok $? "$mode: default policy: Seccomp: 2 in every thread"

	# Audit: every blocked call is a `seccomp` run-log event.
	log=$BASE/audit-$mode.jsonl
	rm -f "$log"
	capture as_mode $mode "$SBX" run -q --log-json "$log" --rootfs "$IMG" -- /bin/seccomp_probe $NO80
	ev() { grep "\"event\":\"seccomp\",\"syscall\":\"$1\"" "$log"; }
	# One event per syscall, errno and the arguments that decided.
	ev mount | grep -q '"count":1,' && ev mount | grep -q '"errno":"EPERM"' &&
		[ "$(ev clone | grep -c '"count":1,')" -eq 7 ] && [ "$(jq -s '[.[] | select(.event == "seccomp" and .syscall == "ioctl").count] | add' "$log")" -eq 4 ] &&
		ev ptrace | grep -qE '"pid":[1-9][0-9]*,"jail_pid":[1-9][0-9]*,'
	ok $? "$mode: audit: blocked calls logged with syscall, count, host and jail pid, errno"
	ev socket | grep -q '"args":"AF_PACKET, SOCK_RAW"' &&
		ev socket | grep -q '"args":"AF_INET6, SOCK_RAW"' &&
		ev socket | grep -q '"args":"AF_NETLINK, SOCK_RAW, protocol 9"' &&
		ev clone | grep -q '"args":"flags 0x10000011"' && ev mount | grep -q '"args":null'
	ok $? "$mode: audit: the events name the arguments that decided (socket family and type)"
	! ev getpid >/dev/null && ! ev clone3 >/dev/null
	ok $? "$mode: audit: allowed calls and clone3 (a plain ENOSYS) are not logged"
	[ "$(grep -c '"event":"seccomp"' "$log")" -ge 60 ]
	ok $? "$mode: audit: at least 60 distinct blocked syscalls logged ($(grep -c '"event":"seccomp"' "$log"))"
	# A command that makes a sandbox of its own (bwrap, Codex's) needs new
	# namespaces, which the jail refuses: the event says why, and the run
	# log says once what to do instead.
	ev clone | grep -q '"hint":"the command tried to make namespaces' &&
		ev unshare | grep -q '"hint":"the command tried to make namespaces' &&
		! ev mount | grep -q '"hint"' && ! ev socket | grep -q '"hint"'
	ok $? "$mode: audit: blocked clone and unshare events carry the namespace hint, others none"
	capture as_mode $mode "$SBX" run --rootfs "$IMG" -- sh -c 'unshare -U true; unshare -m true; exit 3'
	[ $rc -eq 3 ] && printf '%s\n' "$err" | grep -q '^sbx: seccomp: blocked unshare' &&
		[ "$(printf '%s\n' "$err" | grep -c 'a sandbox of its own')" -eq 1 ] &&
		printf '%s\n' "$err" | grep -q 'codex --sandbox danger-full-access; with it, Codex still tries once as it starts'
	ok $? "$mode: a command making its own namespaces: the run log says once why and what to do ($(printf '%s\n' "$err" | grep -A1 'blocked unshare' | tr '\n' ' '))"
	kept=$(printf '%s\n' "$err" | sed -n 's/^sbx: kept sandbox \([0-9a-f]*\) .*/\1/p')
	capture as_mode $mode "$SBX" inspect "$kept"
	[ -n "$kept" ] && printf '%s\n' "$out" | grep -q '^    unshare x2' &&
		[ "$(printf '%s\n' "$out" | grep -c 'a sandbox of its own')" -eq 1 ]
	ok $? "$mode: ... and sbx inspect of the kept sandbox says it under its seccomp events"
	as_mode $mode "$SBX" destroy "$kept" >/dev/null 2>&1

	capture as_mode $mode "$SBX" run -q -p strict --rootfs "$IMG" -- /bin/seccomp_probe --strict $NO80
	ok $rc "$mode: strict policy: probe exits 0 ($(printf '%s\n' "$out" | tail -1))"
	capture as_mode $mode "$SBX" run -q -p strict --rootfs "$IMG" -- sh -c \
		'cd /tmp && echo hello > f && cat f | tr a-z A-Z && mkdir -p d/e && cp f d/e/ && ls d/e | wc -l && mkfifo p && rm -r d p f && echo done'
	[ $rc -eq 0 ] && printf '%s\n' "$out" | head -2 | tr '\n' ' ' | grep -qE '^HELLO +1 $' &&
		printf '%s\n' "$out" | tail -1 | grep -qx done
	ok $? "$mode: strict policy: a shell, pipes, files, busybox tools work (rc=$rc: $(echo $out))"

	capture as_mode $mode "$SBX" run -q -p "$BASE/custom.ini" --rootfs "$IMG" -- sh -c \
		'mkdir /x; echo rc=$?; cat '"$POL/p.policy"
	printf '%s\n' "$err" | grep -q "can't create directory '/x': Permission denied" &&
		printf '%s\n' "$out" | grep -qx 'rc=1'
	ok $? "$mode: a policy file's 'deny mkdir EACCES' applies in the jail"
	printf '%s\n' "$out" | grep -qx 'base none'
	ok $? "$mode: the jail loaded the host's policy, not the one its image planted at the same path"

	capture as_mode $mode "$SBX" run -q -p "$BASE/bad.ini" --rootfs "$IMG" -- true
	[ $rc -eq 125 ] && printf '%s\n' "$err" | grep -qF \
		"seccomp policy '$POL/bad.policy': line 2: unknown syscall 'mkdirr' (did you mean 'mkdir'?)"
	ok $? "$mode: a bad policy file: exit 125 naming file:line ($rc: $err)"

	# Netlink route sockets read the jail's own namespace: getifaddrs,
	# if_nameindex, ip(8), Node's os.networkInterfaces().
	capture as_mode $mode "$SBX" run -q -- python3 -c '
import socket; print(socket.if_nameindex())'
	[ "$rc" = 0 ] && [ "$out" = "[(1, 'lo')]" ]
	ok $? "$mode: if_nameindex() in the jail: its own lo ($rc: $out $err)"
	capture as_mode $mode "$SBX" run -q -- ip -o link show
	[ "$rc" = 0 ] && [ "$(lines "$out")" = 1 ] && [[ "$out" == "1: lo: "* ]]
	ok $? "$mode: ip link in the jail: only its lo ($rc: $err)"
	if command -v node >/dev/null; then
		capture as_mode $mode "$SBX" run -q -- node -e \
			'console.log(Object.keys(require("os").networkInterfaces()).join(","))'
		[ "$rc" = 0 ] && [ "$out" = lo ]
		ok $? "$mode: Node's os.networkInterfaces() works ($rc: $out $err)"
	else
		skip "$mode: Node's os.networkInterfaces()" "node is not installed"
	fi
	capture as_mode $mode "$SBX" run -- ip link set lo down
	[ "$rc" != 0 ] && [[ "$err" == *"Operation not permitted"* ]]
	ok $? "$mode: the jail's netlink cannot change its own links without capabilities ($rc)"
	capture as_mode $mode "$SBX" run --keep -n "raw-$mode" -- python3 -c '
import socket
try: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)
except OSError as e: print(e.errno)'
	[ "$out" = 1 ] && [[ "$err" == *"sbx: seccomp: blocked socket(AF_INET, SOCK_RAW) (1 time, errno EPERM)"* ]]
	ok $? "$mode: a raw socket is refused and the run log names family and type ($out)"
	capture as_mode $mode "$SBX" inspect "raw-$mode"
	grep -qE '^    socket\(AF_INET, SOCK_RAW\) x1 \(pid [0-9]+\)$' <<<"$out"
	ok $? "$mode: inspect names the refused socket's family and type ($(grep -A1 'seccomp events' <<<"$out" | tail -1))"
	as_mode $mode "$SBX" destroy "raw-$mode" >/dev/null 2>&1
done

capture "$SBX" profile check "$BASE/bad.ini"
[ $rc -eq 1 ] && printf '%s\n' "$err" | grep -qF "'$POL/bad.policy': line 2: unknown syscall 'mkdirr'"
ok $? "profile check: a bad seccomp policy file is reported with file:line ($rc)"
capture "$SBX" profile check "$BASE/custom.ini"
ok $rc "profile check: a good seccomp policy file passes"

done_testing
