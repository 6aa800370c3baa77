#!/bin/bash
# tests/integration/run_host_procfs.sh - the host's procfs (and sysfs)
# never reaches the jail.  A chroot on the host (sbuild, schroot,
# debootstrap, arch-chroot) has its own proc (and sys) mounted: a recursive
# bind of it, an overlay of it (bound read-only when it holds mount
# points), or the host's root read-only all took that procfs along, and
# the jail listed the host's processes and read their command lines (a pid
# namespace of its own notwithstanding), and the host's devices.  Run from
# /proc, the default profile's `overlay = $PWD` bound the host's /proc over
# the jail's own.  Now a procfs or sysfs inside what is bound is hidden
# (an empty read-only directory), a bind whose source is on a procfs is
# refused with the entry named, and `overlay = $PWD` from /proc, /dev or
# /sys leaves the jail its own.  Root and nobody (mounting them needs root).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP mounting a procfs needs root"; exit 77; }
sbx_modes
sbx_base
sbx_wd
CH=$BASE/chroot
mkdir -p "$CH/proc" "$CH/sys" "$CH/etc" && echo chroot >"$CH/etc/name" && chmod -R a+rX "$CH"
mount -t proc proc "$CH/proc" || { echo "1..0 # SKIP cannot mount a procfs here"; exit 77; }
trap 'umount "$CH/proc" "$CH/sys" 2>/dev/null; tap_cleanup' EXIT
mount -t sysfs sysfs "$CH/sys" || { echo "1..0 # SKIP cannot mount a sysfs here"; exit 77; }
# pid 1 of the host as the host's procfs shows it: what the jail must not see
HOST1=$(tr '\0' ' ' </proc/1/cmdline | cut -c1-40)
cat >"$BASE/hostroot.ini" <<INI
[sandbox]
rootfs = host
INI
chmod 0644 "$BASE/hostroot.ini"

# what a command sees at DIR: "N entries; pid 1: CMDLINE"
LOOK='ls -A "$0" | wc -l | tr -d " \n"; printf " entries; pid 1: "; tr "\0" " " <"$0/1/cmdline" 2>/dev/null | cut -c1-40'

for mode in $MODES; do
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --ro-bind "$CH:/tmp/chroot" -- \
		sh -c "cat /tmp/chroot/etc/name; $LOOK" /tmp/chroot/proc
	[ "$rc" = 0 ] && [ "$(head -1 <<<"$out")" = chroot ] && [[ "$out" == *"0 entries; pid 1: " ]]
	ok $? "$mode: --ro-bind of a tree holding a procfs: bound, its procfs empty ($rc: $out)"
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --ro-bind "$CH:/tmp/chroot" -- \
		sh -c 'ls -A /tmp/chroot/sys | wc -l'
	[ "$rc" = 0 ] && [ "$out" = 0 ]
	ok $? "$mode: ... and its sysfs empty too (the host's devices) ($rc: $out)"

	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --bind "$CH:/tmp/chroot" -- \
		sh -c "$LOOK" /tmp/chroot/proc
	[ "$rc" = 0 ] && [[ "$out" == "0 entries; pid 1: " ]]
	ok $? "$mode: --bind of it: its procfs empty too ($rc: $out)"

	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --overlay "$CH:/tmp/chroot" -- \
		sh -c "$LOOK" /tmp/chroot/proc
	[ "$rc" = 0 ] && [[ "$out" == "0 entries; pid 1: " ]]
	ok $? "$mode: --overlay of it (read-only: it holds a mount point): its procfs empty ($rc: $out)"

	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --ro-bind "/:/tmp/host" -- sh -c "$LOOK" /tmp/host/proc
	[ "$rc" = 0 ] && [[ "$out" == "0 entries; pid 1: " ]]
	ok $? "$mode: --ro-bind /:/tmp/host: the host's /proc in it is empty ($rc: $out)"

	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q -p "$BASE/hostroot.ini" -- sh -c "$LOOK" "$CH/proc"
	[ "$rc" = 0 ] && [[ "$out" == "0 entries; pid 1: " ]]
	ok $? "$mode: the host's root: the chroot's procfs in it is empty ($rc: $out)"
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q -p "$BASE/hostroot.ini" -- \
		sh -c "ls -A '$CH/sys' | wc -l; ls /sys/class/net | tr '\n' ' '"
	[ "$rc" = 0 ] && [ "$(head -1 <<<"$out")" = 0 ] && [ "$(tail -1 <<<"$out")" = "lo " ]
	ok $? "$mode: ... and its sysfs, the jail's /sys its own (lo only) ($rc: $out)"

	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q -p "$BASE/hostroot.ini" -- sh -c "$LOOK" /proc
	[ "$rc" = 0 ] && [[ "$out" == *"pid 1: sbx-init"* ]] && [[ "$out" != *"$HOST1"* ]]
	ok $? "$mode: ... and its /proc is the jail's own ($rc: $out)"

	for src in "$CH/proc" /proc /proc/self/fdinfo; do
		capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -q --ro-bind "$src:/tmp/hostproc" -- true
		[ "$rc" = 125 ] && [[ "$err" == *"cannot bind '$src': it is on the host's procfs"*"the jail has its own /proc"* ]]
		ok $? "$mode: --ro-bind $src:/tmp/hostproc is refused, the entry named ($rc: $err)"
	done

	# the default profile run from /proc, /dev, /sys: `overlay = $PWD`
	# leaves the jail its own
	capture sbx_as_mode_in /proc "$mode" "$SBX" run -q -- sh -c "pwd; $LOOK" /proc
	[ "$rc" = 0 ] && [ "$(head -1 <<<"$out")" = /proc ] && [[ "$out" == *"pid 1: sbx-init"* ]] &&
		[[ "$err" != *"read-only, not copy-on-write"* ]]
	ok $? "$mode: run from /proc: the jail's own /proc ($rc: $out)"
	capture sbx_as_mode_in /dev "$mode" "$SBX" run -q -- sh -c 'pwd; echo x >/dev/null && echo null-ok'
	[ "$rc" = 0 ] && [ "$out" = "/dev
null-ok" ]
	ok $? "$mode: run from /dev: the jail's own /dev ($rc: $out)"
	capture sbx_as_mode_in /sys/kernel "$mode" "$SBX" run -q -- pwd
	[ "$rc" = 0 ] && [ "$out" = /sys/kernel ] && [[ "$err" != *"read-only, not copy-on-write"* ]]
	ok $? "$mode: run from /sys/kernel: the jail's own /sys ($rc: $out $err)"
	sbx_as_mode "$mode" "$SBX" destroy --all >/dev/null 2>&1
done
done_testing
