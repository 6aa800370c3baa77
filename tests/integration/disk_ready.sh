#!/bin/bash
# sbx-test-lane: long
# tests/integration/disk_ready.sh - as root, the writable layers' ext4 image
# (the default [limits] disk cap) comes from a ready copy of the template
# that the previous run's purger made and synced: a run takes one in a
# rename (never one another run holds, never a file that is not sbx's own),
# the purger refills the slots (after a kept run too) and replaces what
# is not an image of its own, killed writers' temporary files and another
# layout's images go, the template has no backup superblocks and the
# layout's top directories in the first inodes (made by mke2fs, not spread
# by the kernel), and the mount has no barriers (the
# kept image is synced before the record says kept).  As nobody the layers
# are a tmpfs: no image, no template.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_setup_busybox

# ready_slots DIR: the ready copies there, once both exist (20 s at most).
ready_slots() {
	for _ in $(seq 200); do
		[ "$(find "$1" -maxdepth 1 -name '*.ready-[0-9].img' -type f | wc -l)" -ge 2 ] &&
			! pgrep -x sbx-purge >/dev/null && break
		sleep 0.1
	done
	find "$1" -maxdepth 1 -name '*.ready-[0-9].img' -type f | sort
}
inodes() { stat -c %i "$@" 2>/dev/null | sort | tr '\n' ' '; }
kept_image() { # kept_image NAME: the inode of its disk.img
	local id
	id=$(sbx_as_mode root "$SBX" inspect --json "$1" | jq -r .id)
	stat -c %i "$BASE/state-root/sandboxes/$id/disk.img"
}

if ! sbx_as_mode root sh -c '[ -w /dev/loop-control ] && command -v mke2fs' >/dev/null; then
	skip "ready images" "no loop devices or mke2fs here: the layers are a tmpfs"
	done_testing
	exit 0
fi
T=$BASE/state-root/disk-templates
capture sbx_as_mode_in "$WD" root "$SBX" run -q --rootfs "$IMG" -- true
slots=$(ready_slots "$T")
tpl=$(find "$T" -maxdepth 1 -name 'ext4-4k-il-*-*[0-9].img' ! -name '*.ready-*' | head -1)
[ $rc -eq 0 ] && [ -n "$tpl" ] && [ "$(printf '%s\n' "$slots" | grep -c .)" = 2 ]
ok $? "root: after a run, its purger leaves the template and 2 ready copies ($(ls "$T" | tr '\n' ' '))"

# No backup superblocks: less to copy into each ready image, fewer
# extents to free (one discard each) when it is deleted.
hdr=$(dumpe2fs -h "$tpl" 2>/dev/null)
grep -q '^Filesystem features:.* sparse_super2' <<<"$hdr" && ! grep -q '^Backup block groups' <<<"$hdr" &&
	[ "$(stat -c %b "$tpl")" -le $((160 * 1024 / $(stat -c %B "$tpl"))) ]
ok $? "root: the template has no backup superblocks ($(($(stat -c %b "$tpl") * $(stat -c %B "$tpl") / 1024)) KiB of data)"

# Small directories in their inode (inline_data) and no lost+found in the
# template: the directories a run makes and removes in its layer allocate
# and free no block (the first allocation loads the allocator's state
# through the loop device).
grep -q '^Filesystem features:.* inline_data' <<<"$hdr" &&
	! debugfs -R 'ls /' "$tpl" 2>/dev/null | grep -q 'lost+found'
ok $? "root: the template keeps small directories in their inode (inline_data) and has no lost+found"

ls_tpl=$(debugfs -R 'ls -l /' "$tpl" 2>/dev/null)
for d in upper work overlays; do
	ino=$(awk -v d="$d" '$NF == d {print $1}' <<<"$ls_tpl")
	[ -n "$ino" ] && [ "$ino" -le 16 ] || { ino=bad; break; }
done
[ "$ino" != bad ]
ok $? "root: the template has upper, work and overlays in the root's inode table block (mke2fs -d)"

# A kept run takes a ready copy (its disk.img is one of them), and the
# layer holds what it wrote.
before=$(inodes $slots)
capture sbx_as_mode_in "$WD" root "$SBX" run -q --name dr-kept --rootfs "$IMG" -- sh -c 'echo x >/etc/f; exit 3'
ino=$(kept_image dr-kept)
[ $rc -eq 3 ] && [[ " $before" == *" $ino "* ]] &&
	sbx_as_mode root "$SBX" inspect --changes dr-kept | grep -qx 'A /etc/f'
ok $? "root: a run takes a ready copy in a rename (disk.img inode $ino of $before), its changes kept"
layer_ls() { # layer_ls NAME: the top of its image
	debugfs -R 'ls /' "$BASE/state-root/sandboxes/$(sbx_as_mode root "$SBX" inspect --json "$1" | jq -r .id)/disk.img" 2>/dev/null | tr -s ' \n' ' '
}
dfs=$(layer_ls dr-kept)
[[ "$dfs" != *lost+found* ]] && [[ " $dfs " == *" upper "* ]] && [[ " $dfs " == *" overlays "* ]]
ok $? "root: an image root's layer: upper, work, overlays, no lost+found ($dfs)"
capture sbx_as_mode_in "$WD" root "$SBX" run -q --name dr-host -- sh -c 'exit 6'
dfs=$(layer_ls dr-host)
[ $rc -eq 6 ] && [[ "$dfs" != *lost+found* ]] && [[ " $dfs " != *" upper "* ]] &&
	[[ " $dfs " != *" work "* ]] && [[ " $dfs " == *" overlays "* ]]
ok $? "root: the host root's layer: only overlays, none of the layout it does not use ($dfs)"
sbx_as_mode root "$SBX" destroy dr-host >/dev/null
slots=$(ready_slots "$T")
[ "$(printf '%s\n' "$slots" | grep -c .)" = 2 ] && [ "$(inodes $slots)" != "$before" ]
ok $? "root: after a kept run the purger refills the slot it took"
sbx_as_mode root "$SBX" destroy dr-kept >/dev/null

# Ready copies another run holds (locked) are never taken.
slots=$(ready_slots "$T")
before=$(inodes $slots)
fifo=$BASE/lockfifo
mkfifo "$fifo"
set -- $slots
flock -x "$1" flock -x "$2" sh -c "echo \$\$ >$fifo; exec sleep 60" &
holder=$!
read -r leaf <"$fifo"
capture sbx_as_mode_in "$WD" root "$SBX" run -q --name dr-locked --rootfs "$IMG" -- sh -c 'exit 4'
ino=$(kept_image dr-locked)
[ $rc -eq 4 ] && [[ " $before" != *" $ino "* ]] && [ "$(inodes "$1" "$2")" = "$before" ]
ok $? "root: ready copies another run holds are not taken (its own image $ino; $before still there)"
kill "$leaf" 2>/dev/null
wait "$holder" 2>/dev/null
sbx_as_mode root "$SBX" destroy dr-locked >/dev/null

# What is not sbx's own under a ready name is never attached, and the
# purger replaces it; a killed writer's temporary file goes, a live
# writer's (locked) stays.
slots=$(ready_slots "$T")
set -- $slots
echo secret >"$BASE/target"
rm -f "$1" "$2"
ln -s "$BASE/target" "$1"
truncate -s 1M "$2" && chmod 0600 "$2"
touch "$T/.tmp-999999-ready-0.img"
touch "$T/.tmp-999998-ready-0.img"
flock -x "$T/.tmp-999998-ready-0.img" sh -c "echo \$\$ >$fifo; exec sleep 60" &
holder=$!
read -r leaf <"$fifo"
capture sbx_as_mode_in "$WD" root "$SBX" run -q --name dr-junk --rootfs "$IMG" -- sh -c 'echo y >/etc/g; exit 5'
ino=$(kept_image dr-junk)
[ $rc -eq 5 ] && [ "$(cat "$BASE/target")" = secret ] && [ "$ino" != "$(stat -c %i "$2")" ] &&
	sbx_as_mode root "$SBX" inspect --changes dr-junk | grep -qx 'A /etc/g'
ok $? "root: a symlink or a file of the wrong size under a ready name is never used (rc $rc)"
slots=$(ready_slots "$T")
[ ! -L "$1" ] && [ "$(stat -c %s "$1" "$2" | sort -u)" = "$(stat -c %s "$tpl")" ] &&
	[ "$(cat "$BASE/target")" = secret ]
ok $? "root: the purger replaces them with ready copies of the template"
[ ! -e "$T/.tmp-999999-ready-0.img" ] && [ -e "$T/.tmp-999998-ready-0.img" ]
ok $? "root: a killed writer's temporary file is removed, a locked one stays"
kill "$leaf" 2>/dev/null
wait "$holder" 2>/dev/null
rm -f "$T/.tmp-999998-ready-0.img"
sbx_as_mode root "$SBX" destroy dr-junk >/dev/null

# Another layout's images (an older sbx's, never taken again) are removed
# by the purger; other files there are not sbx's to remove.
cp --sparse=always "$tpl" "$T/ext4-4k-dirs-1-2.img"
cp --sparse=always "$tpl" "$T/ext4-4k-dirs-1-2.ready-0.img"
touch "$T/notes.txt"
capture sbx_as_mode_in "$WD" root "$SBX" run -q --rootfs "$IMG" -- true
ready_slots "$T" >/dev/null
[ $rc -eq 0 ] && [ ! -e "$T/ext4-4k-dirs-1-2.img" ] && [ ! -e "$T/ext4-4k-dirs-1-2.ready-0.img" ] &&
	[ -e "$T/notes.txt" ] && [ -e "$tpl" ]
ok $? "root: the purger removes another layout's images, nothing else ($(ls "$T" | tr '\n' ' '))"
rm -f "$T/notes.txt"

# No barriers on the layer's mount (it lives in the supervisor's mount
# namespace); a kept layer's image is synced all the same.
sbx_as_mode_in "$WD" root "$SBX" run -q --name dr-live --rootfs "$IMG" -- sleep 30 >/dev/null 2>&1 &
bg=$!
for _ in $(seq 100); do
	sbx_as_mode root "$SBX" ps --json | jq -e 'any(.[]; .name == "dr-live" and .state == "running")' >/dev/null 2>&1 && break
	sleep 0.1
done
rec=$(sbx_as_mode root "$SBX" inspect --json dr-live)
sup=$(jq -r .supervisor_pid <<<"$rec")
id=$(jq -r .id <<<"$rec")
mi=$(grep " $BASE/state-root/sandboxes/$id/disk " "/proc/$sup/mountinfo")
grep -q ' ext4 /dev/loop' <<<"$mi" && grep -q nobarrier <<<"$mi"
ok $? "root: the layer's ext4 is mounted without barriers, in the supervisor's namespace only ($(awk '{print $NF}' <<<"$mi"))"
! grep -q "$BASE/state-root/sandboxes/$id/disk" /proc/self/mountinfo
ok $? "root: the host's mount table never has it"
sbx_as_mode root "$SBX" stop dr-live >/dev/null 2>&1
wait $bg 2>/dev/null
sbx_as_mode root "$SBX" destroy --all >/dev/null 2>&1
ready_slots "$T" >/dev/null

# The image is mounted after the clone, while init builds what needs no
# layer (lib/run/run_layers.c sbx_run_layers_ready): an init held 1.5 s
# right after GO finds it ready (the disk phase is what the start waited
# for it), and the layers' message already waiting in its socket is not
# taken for the supervisor's end (init used to exit there).
capture sbx_as_mode_in "$WD" root env SBX_FAULT=init-after-go "$SBX" run --name dr-late --keep \
	--rootfs "$IMG" -- sh -c 'echo late >/late; cat /late'
disk_ms=$(sbx_as_mode root "$SBX" inspect --json dr-late | jq -r '.timings_ms.disk // empty')
[ $rc -eq 0 ] && [ "$out" = late ] && [ -n "$disk_ms" ] && jq -en "$disk_ms < 1000" >/dev/null
ok $? "root: an init held after GO starts all the same and finds the image mounted meanwhile (rc $rc, disk phase ${disk_ms:-?} ms; $(grep -m1 'init died' <<<"$err"))"
sbx_as_mode root "$SBX" destroy dr-late >/dev/null 2>&1

# An image that cannot be mounted then (SBX_FAULT=disk-no-image): the
# layers are a tmpfs in the jail, the run log says why, and a kept
# sandbox's layer is copied to disk/, where inspect and exec find it.
capture sbx_as_mode_in "$WD" root env SBX_FAULT=disk-no-image "$SBX" run --name dr-mem \
	--rootfs "$IMG" -- sh -c 'echo mem >/mem.txt; exit 3'
chg=$(sbx_as_mode root "$SBX" inspect --changes dr-mem 2>&1)
got=$(sbx_as_mode root "$SBX" exec dr-mem -- cat /mem.txt 2>&1)
[ $rc -eq 3 ] && grep -q 'cannot be an image on disk (SBX_FAULT=disk-no-image): it is a tmpfs, in memory' <<<"$err" &&
	grep -q '^sbx: limits: .*disk [0-9]*M (the writable layer is a tmpfs, in memory' <<<"$err" &&
	grep -q '^A /mem.txt' <<<"$chg" && [ "$got" = mem ]
ok $? "root: an image that cannot be mounted leaves the layers in memory, kept to disk/ (rc $rc; changes: $(head -1 <<<"$chg"); exec: $got)"
sbx_as_mode root "$SBX" destroy dr-mem >/dev/null 2>&1
ready_slots "$T" >/dev/null

# On a state filesystem with less free space than the default cap, the cap
# is cut down and the run makes an image of its own with mke2fs (no
# template): debugfs, which removes lost+found from a template once
# (~15 ms), is not on that run's path.  A 60 MiB tmpfs, in a mount
# namespace of the test's own.
if command -v strace >/dev/null; then
	small=$BASE/small
	mkdir -p "$small"
	capture unshare -m --propagation private sh -c 'mount -t tmpfs -o size=60m small "$1" &&
		cd "$2" && strace -f -qq -e trace=execve -o "$1/execs" env SBX_STATE_DIR="$1/state" SBX_CACHE_DIR="$1/cache" \
		"$3" run -q --rootfs "$4" -- sh -c "echo s >/s; cat /s" && grep -o "execve(\"[^\"]*\"" "$1/execs"' \
		sh "$small" "$WD" "$SBX" "$IMG"
	[ $rc -eq 0 ] && grep -q '^s$' <<<"$out" && grep -q '/mke2fs"' <<<"$out" && ! grep -q '/debugfs"' <<<"$out"
	ok $? "root: a run whose cut-down cap has no template makes its image with mke2fs alone, no debugfs (rc $rc: $(grep -o '[a-z0-9]*fs"' <<<"$out" | tr '\n' ' '))"
else
	skip "root: a run without a template runs no debugfs" "strace is not installed (tests/deps.sh)"
fi

if [[ " $MODES " == *" user "* ]]; then
	capture sbx_as_mode_in "$WD" user "$SBX" run -q --rootfs "$IMG" -- sh -c 'echo z >/z; cat /z'
	[ $rc -eq 0 ] && [ "$out" = z ] && [ ! -e "$BASE/state-user/disk-templates" ]
	ok $? "user: the layers are a tmpfs: no image and no template in its state"
fi
done_testing
