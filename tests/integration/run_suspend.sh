#!/bin/bash
# sbx-test-lane: wait (Ctrl-Z held for seconds, ticks)
# tests/integration/run_suspend.sh - Ctrl-Z at the caller's terminal
# (with -T: the terminal itself, not the pty sbx gives the command there)
# suspends the run: the command's process group stops, the rest of the jail
# is frozen with it, sbx stops so that the caller's shell gets its prompt
# back ("Stopped"), and `fg` continues all of it; the same for sbx exec and
# for a command that stops itself under -t (the caller's terminal back in
# its own mode while stopped).  A
# command that stops while sbx is not the terminal's foreground job (CI, a
# pipe, a jail process stopping it) leaves sbx running: the time limit
# still ends the run.  Driven through an interactive bash in script(1)'s
# pty.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

command -v script >/dev/null || { echo "1..0 # SKIP script(1) missing"; exit 77; }
sbx_setup_busybox
# ticks N: "tick I UPTIME" every 0.2 s; a gap between two ticks is a
# time the jail did not run.
cat >"$BASE/wd/ticks" <<'EOF'
#!/bin/sh
i=0
while [ $i -lt "$1" ]; do
	i=$((i + 1))
	echo "tick $i $(cut -d' ' -f1 /proc/uptime)"
	sleep 0.2
done
EOF
# bgticks N: the same from a process in a session of its own (not in the
# command's process group, which the terminal's SIGTSTP reaches), to a
# file; the command waits for it.
cat >"$BASE/wd/bgticks" <<'EOF'
#!/bin/sh
setsid sh ./ticks "$1" >/tmp/bg &
sleep 0.1
while [ "$(wc -l </tmp/bg)" -lt "$1" ]; do sleep 0.1; done
sed 's/^/bg /' /tmp/bg
EOF
# selfstop: 5 ticks, the command stops itself (SIGSTOP), 5 ticks.
printf '#!/bin/sh\n./ticks 5\nkill -STOP $$\n./ticks 5\n' >"$BASE/wd/selfstop"
# keystop: as vim and less suspend: the terminal raw, Ctrl-Z read as a
# key, the terminal's mode restored, then kill(0, SIGTSTP); 5 ticks after.
# /kmark/raw (a bind of $BASE/kmark) tells feed_keystop the terminal is raw.
mkdir -p "$BASE/kmark" && chmod 0777 "$BASE/kmark"
cat >"$BASE/wd/keystop" <<'EOF'
#!/bin/sh
stty raw -echo
: >/kmark/raw
dd bs=1 count=1 >/dev/null 2>&1
stty -raw echo
echo keystop-suspends
kill -TSTP 0
./ticks 5
EOF
chmod 0755 "$BASE/wd/ticks" "$BASE/wd/bgticks" "$BASE/wd/selfstop" "$BASE/wd/keystop"

# in_shell MODE FEED [ARG...]: an interactive bash as MODE in a pty,
# reading what the function FEED prints (it sleeps between lines and keys).
in_shell() {
	local mode=$1 pre=""
	shift
	[ "$mode" = user ] && [ "$(id -u)" -eq 0 ] && pre="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --"
	(cd "$BASE/wd" && "$@" | env -i PATH="$PATH" HOME="$BASE" TERM=dumb SBX="$SBX" IMG="$IMG" KMARK="$BASE/kmark" \
		SBX_STATE_DIR="$BASE/state-$mode" SBX_CACHE_DIR="$BASE/cache-$mode" \
		timeout 40 script -qec "$pre bash --norc --noprofile -i" /dev/null 2>&1) |
		tr -d '\r\000' | sed 's/\^@//g'
}

# max_gap: the longest time between two consecutive ticks (of one prefix).
max_gap() {
	sed 's/^\^Z//' | awk -v p="$1" '$1 == p && $2 ~ /^[0-9]+$/ { if (n++) { g = $3 - t; if (g > m) m = g } t = $3 }
		END { printf "%.1f\n", m + 0 }'
}

# wait_fed: until the shell has run its last line (": >fed"), 15 s at most.
wait_fed() {
	local i=0
	while [ ! -e "$BASE/wd/fed" ] && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rm -f "$BASE/wd/fed"
}

# feed_ctrl_z 'COMMAND' ['LINE']: the command, Ctrl-Z after 1.2 s, 2 s
# stopped (LINE run then), fg.
feed_ctrl_z() {
	sleep 0.5
	echo "$1; echo rc=\$?"
	sleep 1.2
	printf '\032'
	sleep 2
	if [ -n "${2:-}" ]; then
		echo "$2; echo ---"
		sleep 0.3
	fi
	echo 'fg; echo rc=$?; : >fed'
	wait_fed
	echo exit
}
# feed_long_stop 'COMMAND': the command, Ctrl-Z after 1 s, 7 s stopped, fg.
feed_long_stop() {
	sleep 0.5
	echo "$1; echo rc=\$?"
	sleep 1
	printf '\032'
	sleep 7
	echo 'fg; echo rc=$?; : >fed'
	wait_fed
	echo exit
}
# feed_keystop 'COMMAND': the command, Ctrl-Z once keystop's terminal is
# raw (a Ctrl-Z before that would be a signal, not the key), 2 s stopped
# (jobs run then), fg.
feed_keystop() {
	local i=0
	rm -f "$BASE/kmark/raw"
	sleep 0.5
	echo "$1; echo rc=\$?"
	while [ ! -e "$BASE/kmark/raw" ] && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.2
	printf '\032'
	sleep 2
	echo 'jobs; echo ---'
	sleep 0.3
	echo 'fg; echo rc=$?; : >fed'
	wait_fed
	echo exit
}
feed_tty() {
	sleep 0.5
	echo '"$SBX" run -q -t --log-json ev-tty.jsonl --rootfs "$IMG" -- ./selfstop; echo rc=$?'
	sleep 3
	echo 'stty -a | grep -o -- "-*icanon"; echo ---'
	sleep 0.3
	echo 'fg; echo rc=$?; : >fed'
	wait_fed
	echo exit
}
# a shell in the jail does its own job control: Ctrl-Z stops its job
feed_tty_shell() {
	sleep 0.5
	echo '"$SBX" run -q -t --rootfs "$IMG" -- sh -i; echo rc=$?; : >fed'
	sleep 0.8
	echo './ticks 8'
	sleep 0.8
	printf '\032'
	sleep 0.5
	echo 'jobs; echo inner-$((6*7))'
	sleep 0.3
	echo 'fg'
	sleep 1.5
	echo 'exit 3'
	wait_fed
	echo exit
}
# feed_kill_fg 'COMMAND': the command, Ctrl-C (which it ignores) after
# 1.5 s, Ctrl-Z, then `kill %1; fg` (bash's kill does not continue a
# stopped job: fg does, and sbx then has the SIGTERM).
feed_kill_fg() {
	sleep 0.5
	echo "$1; echo rc=\$?"
	sleep 1.5
	printf '\003'
	sleep 0.5
	printf '\032'
	sleep 1.5
	echo 'kill %1; fg; echo rc=$?; : >fed'
	wait_fed
	echo exit
}
# On $out and $gap: has PATTERN (a line of it), ticks15, gap_ok (the
# longest gap between ticks is the time stopped).
has() { printf '%s\n' "$out" | grep -q -- "$1"; }
ticks15() { [ "$(printf '%s\n' "$out" | grep -c 'tick [0-9]')" = 15 ]; }
gap_ok() { awk -v g="$gap" 'BEGIN { exit !(g >= 1.5) }'; }

for mode in $MODES; do
	out=$(in_shell $mode feed_ctrl_z '"$SBX" run -q -T --log-json ev-run.jsonl --rootfs "$IMG" -- ./ticks 15' jobs)
	gap=$(max_gap tick <<<"$out")
	has '^\[1\]+ *Stopped' && ticks15 && has '^rc=0$' && gap_ok
	ok $? "$mode: Ctrl-Z stops the command and sbx, fg continues it (longest gap ${gap} s, rc 0)"
	has '^rc=0$' || diag "$out"
	grep -q '"event":"suspend","by":"terminal","signal":20,"name":"TSTP"' "$BASE/wd/ev-run.jsonl" &&
		grep -q '"event":"continue"' "$BASE/wd/ev-run.jsonl"
	ok $? "$mode: the run log has the suspend (by the terminal) and the continue"
	rm -f "$BASE/wd/ev-run.jsonl"

	# --time counts the time the jail runs: 10 ticks (~2 s) under a 6 s
	# limit, stopped 7 s by Ctrl-Z in between, end as they would unstopped
	out=$(in_shell $mode feed_long_stop '"$SBX" run -q -T --time 6s --rootfs "$IMG" -- ./ticks 10')
	[ "$(printf '%s\n' "$out" | grep -c 'tick [0-9]')" = 10 ] && has '^\[1\]+ *Stopped' && has '^rc=0$'
	ok $? "$mode: --time waits while Ctrl-Z holds the run stopped (10 ticks, rc 0)"
	has '^rc=0$' || diag "$out"

	out=$(in_shell $mode feed_ctrl_z '"$SBX" run -q -T --rootfs "$IMG" -- ./bgticks 15')
	gap=$(sed -n 's/^bg tick/tick/p' <<<"$out" | max_gap tick)
	has '^rc=0$' && gap_ok
	ok $? "$mode: Ctrl-Z freezes the jail's other sessions too (longest gap ${gap} s)"
	has '^rc=0$' || diag "$out"

	out=$(in_shell $mode feed_tty)
	gap=$(max_gap tick <<<"$out")
	has '^icanon$' && has '^rc=0$' && gap_ok
	ok $? "$mode: -t: the command stopping suspends sbx, the caller's terminal back in its mode (gap ${gap} s)"
	has '^rc=0$' || diag "$out"
	grep -q '"event":"suspend","by":"command","signal":19,"name":"STOP"' "$BASE/wd/ev-tty.jsonl"
	ok $? "$mode: the run log says the command stopped by itself (SIGSTOP)"
	rm -f "$BASE/wd/ev-tty.jsonl"

	out=$(in_shell $mode feed_ctrl_z '"$SBX" run -q -t --rootfs "$IMG" -- ./ticks 15' \
		'stty -a | grep -o -- "-*icanon"')
	gap=$(max_gap tick <<<"$out")
	has '^icanon$' && ticks15 && has '^rc=0$' && gap_ok
	ok $? "$mode: -t: Ctrl-Z typed for the command suspends the jail and sbx (gap ${gap} s)"
	has '^rc=0$' || diag "$out"

	# a program that reads Ctrl-Z as a key and stops its own group (vim,
	# less): its group must not be orphaned, or the kernel discards the stop
	out=$(in_shell $mode feed_keystop '"$SBX" run -q -t --log-json ev-key.jsonl --bind "$KMARK:/kmark" --rootfs "$IMG" -- ./keystop')
	has '^keystop-suspends$' && has '^\[1\]+ *Stopped' && has '^rc=0$' &&
		[ "$(printf '%s\n' "$out" | grep -c 'tick [0-9]')" = 5 ]
	ok $? "$mode: -t: a program that handles Ctrl-Z and stops itself (kill(0, SIGTSTP)) suspends sbx"
	has '^rc=0$' && has '^\[1\]+ *Stopped' || diag "$out"
	grep -q '"event":"suspend","by":"command","signal":20,"name":"TSTP"' "$BASE/wd/ev-key.jsonl"
	ok $? "$mode: -t: the run log says the command stopped (SIGTSTP)"
	rm -f "$BASE/wd/ev-key.jsonl"

	out=$(in_shell $mode feed_tty_shell)
	has '^inner-42$' && has '^rc=3$' && has '^\[1\]+ *Stopped *\./ticks 8' &&
		! has '^\[1\]+ *Stopped *"\$SBX"'
	ok $? "$mode: -t: a shell in the jail keeps its own job control (Ctrl-Z stops its job, not sbx)"
	has '^rc=3$' || diag "$out"

	pre=""
	[ "$mode" = user ] && [ "$(id -u)" -eq 0 ] && pre="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --"
	(cd "$BASE/wd" && SBX_STATE_DIR=$BASE/state-$mode SBX_CACHE_DIR=$BASE/cache-$mode HOME=$BASE \
		$pre "$SBX" run -q -d -n sus --bind "$BASE/kmark:/kmark" --rootfs "$IMG" -- sleep 60 >/dev/null)
	out=$(in_shell $mode feed_ctrl_z '"$SBX" exec -T sus -- ./ticks 15' jobs)
	gap=$(max_gap tick <<<"$out")
	has '^\[1\]+ *Stopped' && has '^rc=0$' && gap_ok
	ok $? "$mode: sbx exec: Ctrl-Z stops its command and sbx, fg continues it (gap ${gap} s)"
	has '^rc=0$' || diag "$out"
	out=$(in_shell $mode feed_keystop '"$SBX" exec -t sus -- ./keystop')
	has '^keystop-suspends$' && has '^\[1\]+ *Stopped' && has '^rc=0$' &&
		[ "$(printf '%s\n' "$out" | grep -c 'tick [0-9]')" = 5 ]
	ok $? "$mode: sbx exec -t: a program that handles Ctrl-Z and stops itself suspends sbx exec"
	has '^rc=0$' && has '^\[1\]+ *Stopped' || diag "$out"
	(cd "$BASE/wd" && SBX_STATE_DIR=$BASE/state-$mode SBX_CACHE_DIR=$BASE/cache-$mode HOME=$BASE \
		$pre "$SBX" destroy sus >/dev/null 2>&1)

	# At a terminal the command has a pty: Ctrl-C is its key, and one it
	# ignores does not end it; Ctrl-Z, kill %1, fg does (sbx(1)).
	out=$(in_shell $mode feed_kill_fg '"$SBX" run -q --rootfs "$IMG" -- sh -c '\''trap "" INT; sleep 30; echo after'\''')
	# (the pty's echo of the Ctrl-Z may come late: "^Zrc=143")
	has 'rc=143$' && ! has '^after' && has '^\[1\]+ *Stopped'
	ok $? "$mode: a pty's Ctrl-C the command ignores: Ctrl-Z, kill %1, fg ends the run (143)"
	has 'rc=143$' || diag "$out"

	# Not the terminal's foreground job: the command stopped by a process
	# of its jail stays stopped, sbx does not, and --time ends the run.
	capture sbx_as_mode_in "$BASE/wd" $mode timeout 30 "$SBX" run -q --time 2s --rootfs "$IMG" -- \
		sh -c 'kill -STOP $$; echo continued'
	[ "$rc" = 124 ] && ! grep -q continued <<<"$out"
	ok $? "$mode: no terminal: a command the jail stops still ends at --time ($rc)"
done

done_testing
