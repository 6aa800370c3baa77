#!/bin/bash
# tests/integration/run_memory_layers.sh - writable layers held in memory
# (--rm as root and as a user; every run of an ordinary user, whose
# [limits] disk is a tmpfs in the jail) are made by init on that tmpfs:
# nothing of them is made on the state filesystem while the jail runs
# (each run used to make and the purger remove seven directories there,
# ~5% of a run's CPU), and each upper directory still has its lower's
# mode (the image root's, the working directory's).  A sandbox kept after
# such a run has its layers copied to disk/ as before: `sbx diff` shows
# what the command wrote and `sbx exec` sees it.  Root and nobody.
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

done_testing
