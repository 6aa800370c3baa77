#!/bin/bash
# tests/integration/inspect_prose.sh - `sbx inspect` and `sbx inspect
# --html` read as prose and tables, not JSON: mounts one per line by what
# they are, the root and its copy-on-write directories in words, how the
# run ended, resources without a "0 pids" that was never measured, and the
# HTML report's summary and run-log rows in words.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_setup_busybox
printf '[sandbox]\nextends = default\n[secrets]\nGONE = env:SBX_T_NOT_SET?\n' >"$BASE/s.ini"
chmod 0644 "$BASE/s.ini"

# json_free TEXT: no JSON object or array syntax in TEXT.
json_free() { ! grep -qE '\{"|\[\{|":|\{&quot;|&quot;:' <<<"$1"; }

for mode in $MODES; do
	as() { sbx_as_mode_in "$WD" $mode "$@"; }
	as "$SBX" run -q --keep -n "host-$mode" -p "$BASE/s.ini" -- sh -c 'echo x >new.txt; exit 3' >/dev/null 2>&1
	capture as "$SBX" inspect "host-$mode"
	[ "$rc" -eq 0 ]
	ok $? "$mode: inspect of a kept host-root sandbox ($rc: $err)"
	json_free "$out"
	ok $? "$mode: the text report has no JSON in it ($(grep -E '\{"|":' <<<"$out" | head -2))"
	# The working directory, or the home above it when that overlay shows it.
	grep -qE "^  root  +the host's root, read-only; copy-on-write: .*($WD|$BASE) \(the changes stay in this sandbox" <<<"$out"
	ok $? "$mode: the root and its copy-on-write directories, in words"
	grep -qE "^  private tmpfs +/tmp$" <<<"$out" && grep -qE "^  copy-on-write +($WD|$BASE)$" <<<"$out" &&
		grep -qE "^  hidden +[0-9]+ paths: .*/\.ssh" <<<"$out"
	ok $? "$mode: each filesystem entry on a line of its own, by what it is"
	grep -qE "^  how it ended +exit 3$" <<<"$out"
	ok $? "$mode: how it ended, in words"
	! grep -qE "^  (max pids|most processes) +0$" <<<"$out"
	ok $? "$mode: no '0 processes' that was never measured"
	grep -qE "^  GONE +absent \(optional" <<<"$out"
	ok $? "$mode: an absent optional secret says so"
	grep -qE "^  /sys +its own: cpus, its network devices and cgroup; no host devices$" <<<"$out"
	ok $? "$mode: what /sys shows, in words"

	capture as "$SBX" run --rm --ro-bind -/no/such/dir-xyz --bind -/no/such/other-xyz -- true
	[ "$rc" -eq 0 ] && [[ "$err" != *"shared: /no/such"* ]] && [[ "$err" != *dir-xyz* ]] &&
		[[ "$err" == *"not bound: /no/such/other-xyz is not on the host"* ]] &&
		[[ "$err" == *"nothing shared with the host read-write"* ]]
	ok $? "$mode: an optional bind that is not there is not claimed as shared, and said not bound ($(grep filesystem <<<"$err"))"

	as "$SBX" run -q --keep -n "img-$mode" --rootfs "$IMG" --pids 64 --time 90s -- sh -c 'sleep 0.1 & wait; exit 4' >/dev/null 2>&1
	capture as "$SBX" inspect "img-$mode"
	json_free "$out" && grep -qE "^  root +image $IMG, with a private copy-on-write layer" <<<"$out"
	ok $? "$mode: an image sandbox's root in words, no JSON ($(grep -E '\{"|":' <<<"$out" | head -2))"
	grep -qE "^  time +90s \(enforced: timer\)$" <<<"$out" && grep -qE "^  pids +64 \(enforced: " <<<"$out"
	ok $? "$mode: the time limit as the profile writes it, with how it is enforced ($(grep -E '^  (time|pids) ' <<<"$out" | tr '\n' ' '))"
	as "$SBX" inspect --html "$BASE/img-$mode.html" "img-$mode" >/dev/null 2>&1
	grep -q '<td class=k>limits</td><td>pids 64 (rlimit), time 90s (timer)' "$BASE/img-$mode.html"
	ok $? "$mode: the HTML summary's limits too ($(grep -o '<td class=k>limits</td><td>[^<]*' "$BASE/img-$mode.html" | head -1))"

	capture as "$SBX" inspect --html "$BASE/r-$mode.html" "host-$mode"
	html=$(cat "$BASE/r-$mode.html" 2>/dev/null)
	summary=$(sed -n '/<summary>Summary/,/<\/details>/p' <<<"$html")
	policy=$(sed -n '/<summary>Policy answers/,/<\/details>/p' <<<"$html")
	runlog=$(sed -n '/<h4>Run log/,/<\/table>/p' <<<"$html")
	[ "$rc" -eq 0 ] && [ -n "$summary" ] && [ -n "$runlog" ]
	ok $? "$mode: inspect --html wrote the report ($rc: $err)"
	json_free "$summary" && grep -q '<td class=k>exit</td><td>exit 3</td>' <<<"$summary" &&
		grep -q '<td class=k>resources</td><td>wall [0-9]* ms, cpu' <<<"$summary"
	ok $? "$mode: the HTML summary is prose"
	json_free "$policy" && grep -q 'GONE' <<<"$policy"
	ok $? "$mode: the HTML policy answers are prose"
	json_free "$runlog" && grep -q '<td>exit</td><td>exit 3; wall' <<<"$runlog" &&
		grep -q '<td>policy</td><td>user: ' <<<"$runlog" &&
		grep -q '<td>phase</td><td>mounts [0-9.]* ms</td>' <<<"$runlog"
	ok $? "$mode: the HTML run-log rows are prose ($(json_free "$runlog" || grep -E '&quot;:' <<<"$runlog" | head -1))"
	as "$SBX" destroy --all >/dev/null 2>&1
done

done_testing
