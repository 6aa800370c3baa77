#!/bin/bash
# tests/integration/run_jail.sh - isolation properties of `sbx run`, asserted
# from inside the jail and from the host, as root and as an unprivileged
# user (setpriv to 65534), with a busybox rootfs tarball and the host root.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

# As root: both halves (the unprivileged one through setpriv as 65534).
# As anyone else: the unprivileged half as that user.
sbx_modes
sbx_host_base

sbx_base
IMG=$BASE/busybox.tar.gz
sbx_rootfs "$IMG"
sbx_wd

# as_mode MODE CMD...: run CMD as root or as nobody, with private state.
as_mode() {
	local mode=$1
	shift
	if [ "$mode" = user ] && [ "$(id -u)" -ne 0 ]; then
		(cd "$WD" && exec env HOME="$BASE" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			SBX_STATE_DIR="$BASE/state-user" SBX_CACHE_DIR="$BASE/cache-user" "$@")
	elif [ "$mode" = root ]; then
		(cd "$WD" && env SBX_STATE_DIR="$BASE/state-root" SBX_CACHE_DIR="$BASE/cache-root" "$@")
	else
		(cd "$WD" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" \
			SBX_STATE_DIR="$BASE/state-user" SBX_CACHE_DIR="$BASE/cache-user" "$@")
	fi
}


for mode in $MODES; do
	if [ $mode = root ]; then host_root=$HOST_BASE; map="0 $HOST_BASE 65536"; else host_root=$UID_U; map="$UID_U $UID_U 1"; fi

	# Capabilities, no_new_privs, seccomp.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- cat /proc/self/status
	caps=$(printf '%s\n' "$out" | grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' | awk '{print $2}' | sort -u)
	[ "$rc" -eq 0 ] && [ "$caps" = 0000000000000000 ] && [ "$(printf '%s\n' "$out" | grep -c '^Cap')" -eq 5 ]
	ok $? "$mode: all five capability sets are empty"
	printf '%s\n' "$out" | grep -qE '^NoNewPrivs:[[:space:]]+1$'
	ok $? "$mode: no_new_privs is set"
	printf '%s\n' "$out" | grep -qE '^Seccomp:[[:space:]]+2$'
	ok $? "$mode: seccomp filter mode (2)"

	# Id maps and who we are.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- cat /proc/self/uid_map
	if [ $mode = user ] && [ "$(id -u)" -ne 0 ] && command -v newuidmap >/dev/null &&
		grep -q "^$(id -un):" /etc/subuid 2>/dev/null; then
		# a caller with a subordinate range gets it mapped around its own id
		# (as podman maps it): 0.. from the range, itself as itself
		[[ " $(echo $out) " == " 0 "* && " $(echo $out) " == *" $UID_U $UID_U 1 "* ]]
		ok $? "$mode: uid_map maps its subordinate range and itself as $UID_U (got '$(echo $out)')"
	else
		[ "$(echo $out)" = "$map" ]
		ok $? "$mode: uid_map is '$map' (got '$(echo $out)')"
	fi
	capture as_mode $mode "$SBX" run -q -u root --rootfs "$IMG" -- id -u
	[ "$out" = 0 ] || [ $mode = user ]
	ok $? "$mode: -u root is uid 0 inside"

	# pid 1 is sbx's init, the command is not pid 1.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'cat /proc/1/comm; echo $$'
	[ "$(printf '%s\n' "$out" | sed -n 1p)" = sbx-init ] && [ "$(printf '%s\n' "$out" | sed -n 2p)" != 1 ]
	ok $? "$mode: pid 1 is sbx-init, the command is not pid 1 ($(echo $out))"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'tr "\0" "|" </proc/1/cmdline'
	[ "$out" = "sbx-init|" ]
	ok $? "$mode: /proc/1/cmdline does not show sbx's command line"
	# Not even to a command that reads it first thing while the machine is
	# busy (init renamed itself only after starting the command: 151 of 200
	# runs showed sbx's whole command line, -e values included, with three
	# CPU hogs running).
	hogs=()
	for _ in 1 2 3; do
		timeout 60 sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	seen=
	for _ in $(seq 30); do
		o=$(as_mode $mode "$SBX" run -q -e TOKEN=cmdline-secret --rootfs "$IMG" -- cat /proc/1/cmdline 2>&1 | tr '\0' '|')
		[ "$o" = "sbx-init|" ] || { seen=$o; break; }
	done
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	[ -z "$seen" ]
	ok $? "$mode: /proc/1/cmdline is sbx-init from the command's first instruction, 30 runs under load${seen:+ (got '$seen')}"
	# Masks are applied last: a later overlay of a parent does not uncover them.
	mkdir -p "$BASE/home-$mode/.ssh" && echo key >"$BASE/home-$mode/.ssh/id" && chmod -R a+rwX "$BASE/home-$mode"
	capture as_mode $mode env HOME="$BASE/home-$mode" "$SBX" run -q --overlay "$BASE/home-$mode" -- cat "$BASE/home-$mode/.ssh/id"
	[ "$rc" -ne 0 ] && [ "$out" != key ]
	ok $? "$mode: ~/.ssh stays masked under a later overlay of ~ (rc $rc)"

	# init is not dumpable (even after becoming the jail's root, with
	# fs.suid_dumpable=1): its memory, fds, environment and exe are closed
	# to the jail, also to -u root.
	capture as_mode $mode "$SBX" run -q -u root --rootfs "$IMG" -- sh -c 'cat /proc/1/environ; ls /proc/1/fd; readlink /proc/1/exe; head -c 1 /proc/1/mem; grep -c . /proc/1/maps'
	[ -z "$out" ] || [ "$out" = 0 ]
	ok $? "$mode: the jail cannot read init's environ, fds, exe, mem or maps ($(echo $out | head -c 80))"

	# Hostname.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- hostname
	[[ "$out" =~ ^sbx-[0-9a-f]{8}$ ]]
	ok $? "$mode: default hostname sbx-<id> ($out)"
	capture as_mode $mode "$SBX" run -q --hostname box1 --rootfs "$IMG" -- hostname
	[ "$out" = box1 ]
	ok $? "$mode: --hostname sets it"

	# Network: only lo, up in none and in loopback.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "; ifconfig lo'
	[ "$(printf '%s\n' "$out" | sed -n 1p)" = lo ] && [ "$(printf '%s\n' "$out" | wc -l)" -gt 1 ] &&
		printf '%s\n' "$out" | sed 1d | grep -qw UP
	ok $? "$mode: net none: only lo, and it is up"
	capture as_mode $mode "$SBX" run -q --net loopback --rootfs "$IMG" -- ifconfig lo
	printf '%s\n' "$out" | grep -qw UP
	ok $? "$mode: net loopback: lo is up"

	# The default profile's copy-on-write home comes with the host root
	# only; with an image, the working directory comes, the home does not.
	mkdir -p "$BASE/h" && echo home >"$BASE/h/.home-marker" && chmod -R a+rX "$BASE/h"
	echo wd >"$WD/.wd-marker" && chmod a+r "$WD/.wd-marker"
	capture as_mode $mode env HOME="$BASE/h" "$SBX" run -q --rootfs "$IMG" -- sh -c \
		"cat '$BASE/h/.home-marker' 2>/dev/null || echo no-home; cat .wd-marker; echo new >.wd-new"
	[ "$rc" -eq 0 ] && [ "$out" = "$(printf 'no-home\nwd')" ] && [ ! -e "$WD/.wd-new" ]
	ok $? "$mode: image root: the host's home stays out, the working directory is copy-on-write ($out)"
	capture as_mode $mode env HOME="$BASE/h" "$SBX" run -q -- cat "$BASE/h/.home-marker"
	[ "$rc" -eq 0 ] && [ "$out" = home ]
	ok $? "$mode: host root: the home is there (copy-on-write)"

	# Root filesystem: host root read-only; image root writable but private.
	capture as_mode $mode "$SBX" run -q -- sh -c 'touch /sbx-probe-file'
	[ "$rc" -ne 0 ] && [ ! -e /sbx-probe-file ]
	ok $? "$mode: host root is read-only"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'echo x > /etc/written && cat /etc/written'
	[ "$rc" -eq 0 ] && [ "$out" = x ]
	ok $? "$mode: image root is writable"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- cat /etc/written
	[ "$rc" -ne 0 ]
	ok $? "$mode: a second sandbox does not see the first one's writes"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'mount -o remount,rw / 2>&1; touch /proc/sys/kernel/x 2>&1; echo 1 > /proc/sys/kernel/hostname'
	[ "$rc" -ne 0 ]
	ok $? "$mode: /proc/sys is read-only, remount refused"

	# Masked /proc entries read empty.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'cat /proc/keys /proc/timer_list /proc/kallsyms 2>/dev/null | wc -c'
	[ "$out" = 0 ]
	ok $? "$mode: /proc/keys, timer_list, kallsyms are masked ($out bytes)"

	# /dev is minimal.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'ls /dev | tr "\n" " "'
	[ "$out" = "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero " ]
	ok $? "$mode: minimal /dev ($out)"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'echo hi > /dev/null && head -c 4 /dev/urandom | wc -c'
	[ "$out" = 4 ]
	ok $? "$mode: /dev/null and /dev/urandom work"

	# Environment cleared: only what the profile passes and sets.
	capture as_mode $mode env SBX_TEST_SECRET=leak "$SBX" run -q -e FOO=bar --rootfs "$IMG" -- env
	! printf '%s\n' "$out" | grep -q SBX_TEST_SECRET && printf '%s\n' "$out" | grep -qx FOO=bar &&
		printf '%s\n' "$out" | grep -q '^PATH=' && printf '%s\n' "$out" | grep -q '^HOME='
	ok $? "$mode: environment cleared, -e FOO=bar set, PATH and HOME present"

	# Only stdio fds (3 is ls's own directory fd).
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- ls /proc/self/fd
	[ "$(echo $out)" = "0 1 2 3" ]
	ok $? "$mode: only fds 0 1 2 reach the command ($(echo $out))"

	# A rw bind: files the jail creates are owned by an unprivileged host uid.
	SHARED=$BASE/shared-$mode
	mkdir -p "$SHARED" && chmod 0777 "$SHARED"
	capture as_mode $mode "$SBX" run -q --bind "$SHARED:/shared" --rootfs "$IMG" -- sh -c 'echo hi > /shared/made'
	owner=$(stat -c %u "$SHARED/made" 2>/dev/null)
	[ "$rc" -eq 0 ] && [ "$owner" = "$host_root" ] && [ "$owner" != 0 ]
	ok $? "$mode: file made through a rw bind is owned by host uid $host_root (got '$owner')"
	capture as_mode $mode "$SBX" run -q --ro-bind "$SHARED:/shared" --rootfs "$IMG" -- sh -c 'echo no > /shared/made2'
	[ "$rc" -ne 0 ] && [ ! -e "$SHARED/made2" ]
	ok $? "$mode: a ro bind cannot be written"

	# A file bound where nothing is yet: a file is made for it (a
	# directory was, and the mount failed with "Invalid argument").
	echo 'bound file' >"$SHARED/one"
	chmod 0644 "$SHARED/one"
	capture as_mode $mode "$SBX" run -q --ro-bind "$SHARED/one:/bin/one" --rootfs "$IMG" -- cat /bin/one
	[ "$rc" -eq 0 ] && [ "$out" = 'bound file' ]
	ok $? "$mode: a file bound to a new path in an image ($rc: $out $err)"
	capture as_mode $mode "$SBX" run -q --ro-bind "$SHARED/one:/tmp/sub/one" -- cat /tmp/sub/one
	[ "$rc" -eq 0 ] && [ "$out" = 'bound file' ]
	ok $? "$mode: a file bound to a new path in a tmpfs, host root ($rc: $out $err)"
	# A file onto a directory, or a directory onto a file: said so.
	capture as_mode $mode "$SBX" run -q --ro-bind "$SHARED/one:/etc" --rootfs "$IMG" -- true
	[ "$rc" -eq 125 ] && grep -q "'$SHARED/one' is a file and '/etc' a directory" <<<"$err"
	ok $? "$mode: a file onto a directory is refused with a clear line ($rc: $err)"
	capture as_mode $mode "$SBX" run -q --ro-bind "$SHARED:/etc/hostname" --rootfs "$IMG" -- true
	[ "$rc" -eq 125 ] && grep -q "'$SHARED' is a directory and '/etc/hostname' a file" <<<"$err"
	ok $? "$mode: a directory onto a file is refused with a clear line ($rc: $err)"

	# Copy-on-write overlay of the working directory: the host dir is unchanged.
	echo original >"$WD/file-$mode"
	chmod 0666 "$WD/file-$mode"
	capture as_mode $mode "$SBX" run -q -- sh -c "echo changed > file-$mode; rm -f file-$mode; echo new > new-$mode"
	[ "$rc" -eq 0 ] && [ "$(cat "$WD/file-$mode")" = original ] && [ ! -e "$WD/new-$mode" ]
	ok $? "$mode: the working directory overlay leaves the host directory unchanged"

	# Host root: the command sees the host's files (ls works), as the default.
	capture as_mode $mode "$SBX" run -q -- ls /usr/bin/env
	[ "$rc" -eq 0 ] && [ "$out" = /usr/bin/env ]
	ok $? "$mode: host rootfs: host files visible"

	# Nothing left behind: mounts, processes, sandboxes.
	marker=sbx-marker-$mode-$$
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c "sleep 0.1 & : $marker"
	sleep 0.1
	# (only ours: other suites may mount meanwhile)
	! grep -q "$BASE" /proc/self/mountinfo
	ok $? "$mode: no mount left in the host's mountinfo"
	# (the run's purger, which may still be at work, names itself
	# sbx-purge: run_trash.sh; until it has seen sbx's exit it has sbx's
	# command line)
	left=$(for p in $(pgrep -f "$marker"); do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sbx-purge ] || echo "$p"
	done)
	[ -z "$left" ]
	ok $? "$mode: no jail process left ($left)"
	n0=$(ls "$BASE/state-$mode/sandboxes" 2>/dev/null | grep -vc '^\.')
	as_mode $mode "$SBX" run -q --rootfs "$IMG" -- true
	n1=$(ls "$BASE/state-$mode/sandboxes" 2>/dev/null | grep -vc '^\.')
	as_mode $mode "$SBX" run -q --rootfs "$IMG" -- false
	n2=$(ls "$BASE/state-$mode/sandboxes" 2>/dev/null | grep -vc '^\.')
	as_mode $mode "$SBX" run -q --rm --rootfs "$IMG" -- false
	n3=$(ls "$BASE/state-$mode/sandboxes" 2>/dev/null | grep -vc '^\.')
	as_mode $mode "$SBX" run -q --keep --rootfs "$IMG" -- true
	n4=$(ls "$BASE/state-$mode/sandboxes" 2>/dev/null | grep -vc '^\.')
	[ "$n1" = "$n0" ] && [ "$n2" = $((n0 + 1)) ] && [ "$n3" = "$n2" ] && [ "$n4" = $((n2 + 1)) ]
	ok $? "$mode: success removed, failure kept (on-failure), --rm removed, --keep kept ($n0 $n1 $n2 $n3 $n4)"
	# The run log says what happens at the end, --rm and --keep included.
	capture as_mode $mode "$SBX" run --rootfs "$IMG" -- true
	p0=$(grep '^sbx: persist: ' <<<"$err")
	capture as_mode $mode "$SBX" run --rm --rootfs "$IMG" -- true
	p1=$(grep '^sbx: persist: ' <<<"$err")
	capture as_mode $mode "$SBX" run --keep -n pk-$mode --rootfs "$IMG" -- true
	p2=$(grep '^sbx: persist: ' <<<"$err")
	j=$(as_mode $mode "$SBX" inspect --json pk-$mode | jq -c '[.policy.persist, .policy.persist_summary]')
	t=$(as_mode $mode "$SBX" inspect pk-$mode | grep -E '^ *persist ')
	as_mode $mode "$SBX" destroy pk-$mode >/dev/null
	[ "$p0" = "sbx: persist: on-failure" ] &&
		[ "$p1" = "sbx: persist: never (--rm, over the profile's persist = on-failure)" ] &&
		[ "$p2" = "sbx: persist: always (--keep, over the profile's persist = on-failure)" ] &&
		[ "$j" = '["always","always (--keep, over the profile'"'"'s persist = on-failure)"]' ] &&
		[[ "$t" == *"always (--keep, over the profile's persist = on-failure)"* ]]
	ok $? "$mode: the run log and inspect say --rm and --keep over the profile's persist ($p0 / $p1 / $p2 / $j / $t)"

	# Every built-in profile limits processes, and the run log says how.
	for p in default agent; do
		capture as_mode $mode "$SBX" run -p $p -- true
		grep -qE "^sbx: limits: pids 4096 \((cgroup v1|cgroup v2|rlimit NPROC, per uid in the jail's user namespace)\)" <<<"$err"
		ok $? "$mode: -p $p: at most 4096 processes, said in the run log ($(grep 'limits:' <<<"$err"))"
	done

	# /sys: the jail's own (cpus, its lo), or nothing with sysfs = none.
	printf '[sandbox]\nextends = default\n[filesystem]\nsysfs = none\n' >"$BASE/nosys.ini"
	chmod 0644 "$BASE/nosys.ini"
	for root in image host; do
		r=(--rootfs "$IMG")
		[ $root = host ] && r=()
		capture as_mode $mode "$SBX" run -q "${r[@]}" -- sh -c 'ls /sys/class/net; cat /sys/devices/system/cpu/online'
		[ "$rc" -eq 0 ] && [ "$(head -n 1 <<<"$out")" = lo ] && [ "$(lines "$out")" -eq 2 ]
		ok $? "$mode, $root root: /sys shows the jail's own lo and the cpus ($rc: $out $err)"
		capture as_mode $mode "$SBX" run -q "${r[@]}" -p "$BASE/nosys.ini" -- ls -A /sys
		[ "$rc" -eq 0 ] && [ -z "$out" ]
		ok $? "$mode, $root root: sysfs = none leaves /sys empty ($rc: $out $err)"
	done
done

# A mount point the read-only root does not have: one line that names it,
# says why and what to do, exit 125 (it used to end at "Read-only file
# system").
printf '[sandbox]\nextends = default\nwritable = no\n' >"$BASE/ro.ini"
chmod 0644 "$BASE/ro.ini"
for mode in $MODES; do
	for root in host image; do
		ropt=
		[ $root = image ] && ropt="-p $BASE/ro.ini --rootfs $IMG"
		# the directories named are ones this root has (busybox: no /mnt)
		such="/tmp or /mnt"
		[ $root = image ] && such="/tmp or /home"
		capture as_mode $mode "$SBX" run -q $ropt --tmpfs /sbx-no-such-dir -- true
		[ "$rc" = 125 ] && [ "$(wc -l <<<"$err")" = 1 ] &&
			[ "$err" = "sbx: cannot create mount point '/sbx-no-such-dir': Read-only file system (the jail's root is read-only and has no '/sbx-no-such-dir': mount it under a directory the root has, such as $such, or make that directory in the root first)" ]
		ok $? "$mode, $root root: a tmpfs where the read-only root has no directory: exit 125, one line saying what to do ($rc: $err)"
	done
done

done_testing
