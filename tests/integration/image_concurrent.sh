#!/bin/bash
# tests/integration/image_concurrent.sh - many runs starting at once on one
# cold image cache (an array job's tasks landing on one node), as root and
# as nobody: 12 `sbx run --rootfs` of one tarball released together through
# a fifo all succeed, exactly one of them unpacks it (the others wait for
# that unpack and use its image: their run logs say cached), and the cache
# holds one complete image, no half one and no lock file.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
sbx_setup_busybox
N=12
NENTRIES=$(tar tzf "$IMG" | sed 's,/$,,; s,^\./,,' | grep -vc '^\.\?$')

for mode in $MODES; do
	C=$BASE/cache-$mode
	rm -rf "$C"
	gate=$BASE/gate-$mode
	rm -f "$gate" && mkfifo -m 0666 "$gate"
	pids=
	for i in $(seq $N); do
		sbx_as_mode_in "$WD" $mode sh -c 'read x < "$1"; exec "$2" run -q --rm --rootfs "$3" --log-json "$4" -- true' \
			sh "$gate" "$SBX" "$IMG" "$BASE/$mode-$i.jsonl" &
		pids="$pids $!"
	done
	sleep 0.5
	: >"$gate" # every reader sees EOF at once
	bad=0
	for p in $pids; do wait "$p" || bad=$((bad + 1)); done
	ok $bad "$mode: $N runs released at once on a cold cache all succeed"
	cold=$(cat "$BASE/$mode"-*.jsonl | jq -r 'select(.event == "start") | .rootfs.cached' | grep -c false)
	starts=$(cat "$BASE/$mode"-*.jsonl | jq -r 'select(.event == "start") | .rootfs.sha256' | sort -u)
	ok $([ "$cold" = 1 ] && [ "$(lines "$starts")" = 1 ]; echo $?) \
		"$mode: one of them unpacked the tarball, the others used its image ($cold unpacked)"
	imgs=$(find "$C/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat ! -name '.tmp-*' | wc -l)
	tmps=$(find "$C/images" -mindepth 1 -maxdepth 1 -name '.tmp-*' | wc -l)
	locks=$(find "$C/images" -name '.unpack-*' | wc -l)
	d=$(find "$C/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat ! -name '.tmp-*' | head -n 1)
	n=$(cd "$d" 2>/dev/null && find . -mindepth 1 | wc -l)
	ok $([ "$imgs" = 1 ] && [ "$tmps" = 0 ] && [ "$locks" = 0 ] && [ "$n" = "$NENTRIES" ]; echo $?) \
		"$mode: one complete image, no half one, no lock file ($imgs, $tmps, $locks; $n/$NENTRIES entries)"
done
done_testing
