#!/bin/bash
# tests/integration/run_memory_layers.sh - writable layers held in memory
# (--rm as root and as a user; every run of an ordinary user, whose
# [limits] disk is a tmpfs in the jail) are made by init on that tmpfs:
# nothing of them is made on the state filesystem while the jail runs
# (each run used to make and the purger remove seven directories there,
# ~5% of a run's CPU), and each upper directory still has its lower's
# mode (the image root's, the working directory's).  A sandbox kept after
# such a run has its layers copied to disk/ as before: `sbx diff` shows
# what the command wrote and `sbx exec` sees it; as root (state on an
# overlayfs) with the owners the jail gave, never a setuid-root file of the
# host's.  Root and nobody.
#
# As root the file runs in a mount namespace of its own: the overlayfs it
# mounts for its state (part 3) is then no mount of the host's, which the
# host-root jails of the test files beside it would see.
. "$(dirname "$0")/../lib/mntns.sh"
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools jq
sbx_setup_busybox
chmod 0775 "$WD"

# sandbox_dir MODE NAME: STATE/sandboxes/ID of the running sandbox NAME
# (waits up to 10 s for its record)
sandbox_dir() {
	local id
	for _ in $(seq 100); do
		id=$(sbx_as_mode "$1" "$SBX" ps --json 2>/dev/null |
			jq -r --arg n "$2" '.[] | select(.name == $n and .state == "running") | .id')
		[ -n "$id" ] && {
			echo "$BASE/state-$1/sandboxes/$id"
			return
		}
		sleep 0.1
	done
}

for mode in $MODES; do
	# 1. --rm: the layers are on the jail's tmpfs only.
	(sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --rm --name "mem-rm-$mode" --rootfs "$IMG" -- \
		sh -c 'echo a >/new-root-file && echo b >made-here && stat -c %a / . &&
		       cat /new-root-file made-here && sleep 3' >"$BASE/rm-$mode.out" 2>"$BASE/rm-$mode.err") &
	pid=$!
	d=$(sandbox_dir "$mode" "mem-rm-$mode")
	[ -n "$d" ] && [ -d "$d" ] && [ ! -e "$d/disk" ]
	ok $? "$mode --rm: nothing of the layers on the state filesystem while it runs ($(ls -A "$d" 2>&1 | tr '\n' ' '))"
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" inspect --changes "mem-rm-$mode"
	[ "$rc" = 1 ] && [[ "$err" == *"in memory while it runs ([limits] disk, a tmpfs in the jail)"* ]] &&
		[[ "$err" != *unprivileged* ]]
	ok $? "$mode --rm: inspect --changes while it runs says why there is nothing to read, not 'unprivileged' ($rc: $err)"
	wait $pid
	rc=$?
	mode_root=$(tar -tvzf "$IMG" 2>/dev/null | awk '$NF == "./" {print $1; exit}')
	[ "$rc" = 0 ] && [ "$(sed -n 3,4p "$BASE/rm-$mode.out" | tr "\n" " ")" = "a b " ] &&
		[ ! -e "$WD/made-here" ]
	ok $? "$mode --rm: the command wrote to the image root and the working directory, not the host ($rc: $(tr '\n' ' ' <"$BASE/rm-$mode.out"))"
	[ "$(head -2 "$BASE/rm-$mode.out" | tr "\n" " ")" = "755 775 " ]
	ok $? "$mode --rm: the uppers have their lowers' modes (image root 755 ($mode_root), working directory 775): $(head -2 "$BASE/rm-$mode.out" | tr "\n" " ")"

	# 2. A run that may be kept: as a user the layers are in memory too
	# (as root, an image on disk: not this test's).
	[ "$mode" = root ] && continue
	(sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --name "mem-keep" --rootfs "$IMG" -- \
		sh -c 'echo kept >/kept-file && echo w >written-here && sleep 3; exit 3' \
		>/dev/null 2>"$BASE/keep.err") &
	pid=$!
	d=$(sandbox_dir "$mode" mem-keep)
	[ -n "$d" ] && [ ! -e "$d/disk" ]
	ok $? "$mode: persist on-failure: nothing of the layers on disk while it runs ($(ls -A "$d" 2>&1 | tr '\n' ' '))"
	wait $pid
	rc=$?
	[ "$rc" = 3 ] && [ -d "$d/disk/upper" ] && [ "$(cat "$d/disk/upper/kept-file" 2>&1)" = kept ]
	ok $? "$mode: failed and kept: its image layer is on disk/ ($rc: $(grep -h 'kept\|FAIL\|warn' "$BASE/keep.err" | tr '\n' ' '))"
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" diff --name-only mem-keep
	[ "$rc" = 0 ] && [[ "$out" == *written-here* ]]
	ok $? "$mode: sbx diff shows what it wrote in the working directory ($rc: $out $err)"
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" exec mem-keep -- sh -c 'cat /kept-file written-here; stat -c %a /'
	[ "$rc" = 0 ] && [ "$(echo $out)" = "kept w 755" ]
	ok $? "$mode: sbx exec in the kept sandbox sees it, modes kept ($rc: $out $err)"
	capture sbx_as_mode "$mode" "$SBX" destroy mem-keep
	ok $rc "$mode: destroyed ($out $err)"
done

# 3. Root with its state on an overlayfs (sbx in a container): the layers
# are in memory, and a kept sandbox's are copied to disk/ by root.  What
# the jail's users own (-p build: its root may chown) stays theirs (host
# ids of the jail's range), and a
# setuid file the jail's root made is not a setuid-root file of the host.
if [ "$(id -u)" = 0 ]; then
	sbx_host_base
	O=$BASE/ovl && mkdir -p "$O/l" "$O/u" "$O/w" "$O/m"
	# unmounted before TAP_TMP is removed, even if this file is stopped early
	trap 'umount -l "$O/m" 2>/dev/null; tap_cleanup' EXIT
	if mount -t overlay overlay -o "lowerdir=$O/l,upperdir=$O/u,workdir=$O/w" "$O/m"; then
		! grep -q " $O/m " /proc/1/mountinfo
		ok $? "root, state on an overlayfs: the overlayfs is this test's mount only, not one of the host's"
		capture sbx_as_dirs root "$O/m/state" "$BASE/cache-root" "$SBX" run -q -p build --name mem-ovl \
			--rootfs "$IMG" -- sh -c 'cp /bin/busybox /s && chmod 4755 /s && echo g >/g &&
			chown 1000:1000 /g && exit 3'
		up=$(ls -d "$O"/m/state/sandboxes/*/disk/upper 2>/dev/null | head -1)
		[ "$rc" = 3 ] && [ "$(stat -c '%u %a' "$up/s" 2>&1)" = "$HOST_BASE 4755" ] &&
			[ "$(stat -c '%u:%g' "$up/g" 2>&1)" = "$((HOST_BASE + 1000)):$((HOST_BASE + 1000))" ]
		ok $? "root, state on an overlayfs: kept layers keep their jail owners, no setuid-root file ($rc: $(stat -c '%n %u:%g %a' "$up/s" "$up/g" 2>&1 | tr '\n' ' '))"
		capture sbx_as_dirs root "$O/m/state" "$BASE/cache-root" "$SBX" exec mem-ovl -- stat -c '%u:%g' /s /g
		[ "$rc" = 0 ] && [ "$(echo $out)" = "0:0 1000:1000" ]
		ok $? "root, state on an overlayfs: sbx exec sees them owned as in the run ($rc: $out $err)"
		sbx_as_dirs root "$O/m/state" "$BASE/cache-root" "$SBX" destroy mem-ovl >/dev/null 2>&1
		umount "$O/m"
	else
		skip "root, state on an overlayfs" "cannot mount an overlayfs here"
	fi
fi

done_testing
