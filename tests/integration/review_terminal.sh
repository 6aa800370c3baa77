#!/bin/bash
# tests/integration/review_terminal.sh - what the jail wrote reaches the
# reviewer's terminal shown, never as control sequences.  A kept run writes
# a file whose name and content hold escape sequences: a title set (OSC 0),
# a screen clear, a device status request (the terminal answers it by
# typing into the reviewer's input) and a colour that would repaint what
# follows.  On a terminal, `sbx diff` (patch, --stat, --name-only),
# `inspect --changes` and `apply --dry-run` print them as \x1b...; into a
# pipe, `sbx diff` stays the exact patch that `git apply` takes.  As root
# and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
command -v script >/dev/null || { echo "1..0 # SKIP script(1) missing"; exit 77; }
command -v git >/dev/null || { echo "1..0 # SKIP git missing"; exit 77; }
sbx_setup_busybox

# the raw sequences that must never reach the terminal
raw_found() { # TEXT
	grep -q $'\033]0;' <<<"$1" || grep -q $'\033\[6n' <<<"$1" || grep -q $'\033\[2J' <<<"$1" ||
		grep -q $'\033\[31mname' <<<"$1" || grep -q $'\a' <<<"$1" || grep -q $'\302\233' <<<"$1"
}

for mode in $MODES; do
	P=$BASE/proj-$mode
	rm -rf "$P" && mkdir -p "$P" && echo base >"$P/base.txt" && chmod -R 0777 "$P"
	# a user's jail cannot copy up a file of an id it does not map
	[ "$mode" = user ] && [ "$(id -u)" = 0 ] && chown -R 65534:65534 "$P"
	sleep 0.1 # a change in the last 20 ms before a run reads as a conflict
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -q --keep -n "esc-$mode" --rootfs "$IMG" -- sh -c \
		'printf "line\033]0;PWNED\007\033[2J\n" >"evil$(printf "\033[31m")name.txt"
		 printf "x\033[6n \302\233y tab\there\n" >>base.txt'
	[ "$rc" = 0 ]
	ok $? "$mode: the run wrote its files ($rc)"
	[ "$rc" = 0 ] || diag "$err"

	for cmd in "diff esc-$mode" "diff --stat esc-$mode" "diff --name-only esc-$mode" \
		"inspect --changes esc-$mode" "apply --dry-run esc-$mode"; do
		out=$(cd "$P" && sbx_as_mode "$mode" script -qec "$SBX $cmd" /dev/null 2>&1)
		! raw_found "$out" && [[ "$out" == *'\x1b'* ]]
		ok $? "$mode: sbx $cmd on a terminal shows the sequences escaped"
		raw_found "$out" && diag "$(cat -v <<<"$out" | head -20)"
	done
	out=$(cd "$P" && sbx_as_mode "$mode" script -qec "$SBX diff esc-$mode" /dev/null 2>&1)
	[[ "$out" == *$'tab\there'* ]] && [[ "$out" == *'+line\x1b]0;PWNED\x07\x1b[2J'* ]]
	ok $? "$mode: a tab stays a tab, the rest reads as it was written"

	# into a pipe: the exact patch
	rm -rf "$BASE/clean-$mode" && mkdir -p "$BASE/clean-$mode" && echo base >"$BASE/clean-$mode/base.txt"
	(cd "$P" && sbx_as_mode "$mode" "$SBX" diff "esc-$mode") >"$BASE/esc-$mode.diff" 2>/dev/null
	(cd "$BASE/clean-$mode" && git apply "$BASE/esc-$mode.diff") &&
		printf 'base\nx\033[6n \302\233y tab\there\n' | cmp -s - "$BASE/clean-$mode/base.txt" &&
		printf 'line\033]0;PWNED\007\033[2J\n' | cmp -s - "$BASE/clean-$mode/evil"$'\033[31m'"name.txt"
	ok $? "$mode: into a pipe the patch is exact: git apply writes the same bytes"
	sbx_as_mode "$mode" "$SBX" destroy "esc-$mode" >/dev/null 2>&1
done
done_testing
