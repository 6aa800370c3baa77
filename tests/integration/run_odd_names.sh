#!/bin/bash
# tests/integration/run_odd_names.sh - a project directory whose name the
# profile format cannot hold as it is.  The record keeps the resolved
# profile as INI, and `sbx exec` of a kept sandbox reads it back: a
# directory named "x<newline>bind = DIR" (a cloned repository can hold
# one) put a line "bind = DIR" of its own there, and exec bound DIR
# read-write.  A name ending in " when host" was taken for the profile's
# suffix (the agent profile bound the directory "x" instead, a symlink to
# anywhere), one ending in a blank was refused, and the run log printed a
# newline in a name as a line of its own.  Now such values are quoted in
# the record, the suffix is only the profile's own text, and each sbx
# line stays one line.  As root and as an ordinary user.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools jq
sbx_modes
sbx_base

nl='
'
for mode in $MODES; do
	if [ "$mode" = root ]; then owner=4242:4343; else owner=$UID_U:$UID_U; fi
	D=$BASE/$mode
	T=$D/target
	L=$(printf '%s/caf\351' "$D")
	mkdir -p "$T" "$D/x" "$D/x${nl}bind = $T" "$D/home" "$L" && chown -R "$owner" "$D" && chmod 0755 "$D"
	H=(env HOME="$D/home") # the projects outside of the copy-on-write home

	# the newline: exec into the kept sandbox gets no bind of its own
	capture sbx_as_mode_in "$D/x${nl}bind = $T" "$mode" "${H[@]}" "$SBX" run --keep -n "nl-$mode" -- pwd
	fs=$(grep -c '^sbx: filesystem: .*/x\\nbind = ' <<<"$err")
	[ "$rc" = 0 ] && [ "$out" = "$D/x${nl}bind = $T" ] && [ "$fs" = 1 ] && ! grep -q '^bind = ' <<<"$err"
	ok $? "$mode: a newline in the project's name: the run log's line stays one line ($rc: $err)"
	capture sbx_as_mode "$mode" "${H[@]}" "$SBX" exec "nl-$mode" sh -c "pwd; echo x >$T/proof && echo WROTE"
	[ "$(head -2 <<<"$out")" = "$D/x${nl}bind = $T" ] && [ ! -e "$T/proof" ]
	ok $? "$mode: exec into that kept sandbox binds nothing the name wrote ($rc: $out)"
	ini=$(sbx_as_mode "$mode" "${H[@]}" "$SBX" inspect --json "nl-$mode" | jq -r .profile.ini)
	! grep -q "^bind = $T" <<<"$ini"
	ok $? "$mode: the record's profile holds the name quoted, as one value"
	sbx_as_mode "$mode" "${H[@]}" "$SBX" destroy "nl-$mode" >/dev/null

	# a blank at the end: runs, and exec finds its copy-on-write view
	B="$D/proj "
	mkdir -p "$B" && chown "$owner" "$B"
	capture sbx_as_mode_in "$B" "$mode" "${H[@]}" "$SBX" run -q --keep -n "bl-$mode" -- sh -c 'echo v >f && pwd'
	[ "$rc" = 0 ] && [ "$out" = "$B" ] && [ ! -e "$B/f" ]
	ok $? "$mode: a project whose name ends in a blank runs ($rc: $out $err)"
	capture sbx_as_mode "$mode" "${H[@]}" "$SBX" exec "bl-$mode" cat f
	[ "$rc" = 0 ] && [ "$out" = v ]
	ok $? "$mode: exec into it sees its changes ($rc: $out $err)"
	sbx_as_mode "$mode" "${H[@]}" "$SBX" destroy "bl-$mode" >/dev/null

	# " when host" at the end: the agent profile binds this directory,
	# not "x" (a symlink to another one)
	W="$D/w when host"
	mkdir -p "$W" "$D/other" && ln -sfn "$D/other" "$D/w" && chown -h "$owner" "$W" "$D/other" "$D/w"
	capture sbx_as_mode_in "$W" "$mode" "${H[@]}" "$SBX" run -p agent --net none -- sh -c 'echo v >f && pwd'
	[ "$rc" = 0 ] && [ "$out" = "$W" ] && [ -e "$W/f" ] && [ ! -e "$D/other/f" ] &&
		[[ "$err" == *"shared: $W (bind rw"* ]]
	ok $? "$mode: a project named '... when host' is the one bound read-write ($rc: $out $err)"

	# a long value of several lines on the command line (a certificate):
	# exec into the kept sandbox reads the record's profile back
	cert=$(for i in $(seq 200); do echo "line $i $(printf '%060d' "$i")"; done)
	capture sbx_as_mode_in "$D" "$mode" "${H[@]}" "$SBX" run -q --keep -n "ce-$mode" -e "CERT=$cert" \
		-e 'P=/bin:~/bin' -- true
	capture sbx_as_mode "$mode" "${H[@]}" "$SBX" exec "ce-$mode" sh -c 'printf %s "$CERT"'
	[ "$rc" = 0 ] && [ "$out" = "$cert" ]
	ok $? "$mode: exec into a sandbox run with a 14 KB value of 200 lines gets it whole ($rc: $err)"
	capture sbx_as_mode "$mode" "${H[@]}" "$SBX" exec "ce-$mode" sh -c 'printf %s "$P"'
	[ "$rc" = 0 ] && [ "$out" = '/bin:~/bin' ]
	ok $? "$mode: and -e P=/bin:~/bin as it was, not with the home put in ($rc: $out $err)"
	sbx_as_mode "$mode" "${H[@]}" "$SBX" destroy "ce-$mode" >/dev/null

	# a name that is not UTF-8 (Latin-1): the record keeps the path
	# itself, so exec, diff and apply find the directory
	# (made at the start: apply takes a directory changed within 20 ms of
	# the sandbox's start for one changed after it)
	capture sbx_as_mode_in "$L" "$mode" "${H[@]}" "$SBX" run --keep -n "l1-$mode" -- sh -c 'echo v >f && pwd'
	[ "$rc" = 0 ] && [ "$out" = "$L" ] && [ ! -e "$L/f" ] &&
		grep -q "^sbx: filesystem: .*/caf\\\\xe9 copy-on-write" <<<"$err"
	ok $? "$mode: a project whose name is not UTF-8 runs, and the run log shows \\xe9 ($rc: $err)"
	capture sbx_as_mode "$mode" "${H[@]}" "$SBX" exec "l1-$mode" cat f
	[ "$rc" = 0 ] && [ "$out" = v ]
	ok $? "$mode: exec into it sees its changes ($rc: $out $err)"
	capture sbx_as_mode "$mode" "${H[@]}" "$SBX" diff "l1-$mode"
	[ "$rc" = 0 ] && [[ "$out" == *"+++ b/f"* ]]
	ok $? "$mode: diff shows them ($rc: $out $err)"
	capture sbx_as_mode "$mode" "${H[@]}" "$SBX" apply "l1-$mode"
	[ "$rc" = 0 ] && [ "$(cat "$L/f")" = v ]
	ok $? "$mode: apply writes them to the directory ($rc: $out $err)"
	sbx_as_mode "$mode" "${H[@]}" "$SBX" destroy "l1-$mode" >/dev/null
done

# an error that names what it was given stays one line of sbx's, with no
# escape sequence reaching the terminal
capture "$SBX" run --bind "/nope${nl}sbx: network: host" -- true
[ "$rc" = 125 ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == *'/nope\nsbx: network: host'* ]]
ok $? "an error naming a path with a newline is one line ($rc: $err)"
capture "$SBX" "run$(printf '\033')[2J"
[ "$rc" = 2 ] && [[ "$err" == *"unknown command 'run\x1b[2J'"* ]] && [[ "$err" != *$'\033'* ]]
ok $? "an unknown command's escape sequence is shown, not sent ($rc: $err)"

done_testing
