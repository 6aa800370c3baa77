#!/bin/bash
# tests/integration/run_optional_bind.sh - an optional read-write bind
# ("bind = -~/.codex", the agent profiles' login directories) whose source
# is not on the host is skipped: what the command writes there lands in
# the sandbox's copy-on-write home and is gone with it.  A first run of
# `sbx run -p codex -- codex login` lost its login that way without a
# word.  The run log's filesystem line says which optional bind was not
# made and what to do; an optional ro-bind that is not there (the default
# profile's /run/resolvconf) adds nothing; once the directory exists the
# bind is made and what the command writes reaches the host.  Root and
# nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_modes
sbx_base
sbx_wd
for mode in $MODES; do
	H=$BASE/home-$mode
	rm -rf "$H" && mkdir -p "$H" && chmod 0777 "$H"
	cat >"$BASE/opt-$mode.ini" <<INI
[filesystem]
overlay = -$H
bind = -$H/.agentconf
ro-bind = -/nonexistent-sbx-test
INI
	chmod 0644 "$BASE/opt-$mode.ini"
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -p "$BASE/opt-$mode.ini" -- \
		sh -c "mkdir -p $H/.agentconf && echo token >$H/.agentconf/auth && cat $H/.agentconf/auth"
	line=$(grep '^sbx: filesystem:' <<<"$err")
	[ "$rc" = 0 ] && [ "$out" = token ] && [ ! -e "$H/.agentconf" ]
	ok $? "$mode: the optional bind's source is missing: the command's write stays in the sandbox ($rc: $out)"
	[[ "$line" == *"not bound: $H/.agentconf is not on the host (what the command writes there is not kept: create it on the host first to keep it)"* ]]
	ok $? "$mode: the run log says the bind was not made and what to do: $line"
	[[ "$line" != *nonexistent-sbx-test* ]]
	ok $? "$mode: a missing optional ro-bind is not mentioned"

	mkdir -p "$H/.agentconf" && chmod 0777 "$H/.agentconf"
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run -p "$BASE/opt-$mode.ini" -- \
		sh -c "echo token >$H/.agentconf/auth"
	line=$(grep '^sbx: filesystem:' <<<"$err")
	[ "$rc" = 0 ] && [ "$(cat "$H/.agentconf/auth" 2>/dev/null)" = token ] &&
		[[ "$line" != *"not bound"* ]] && [[ "$line" == *"shared: $H/.agentconf (bind rw"* ]]
	ok $? "$mode: once it exists, it is bound and the write reaches the host: $line"
done

done_testing
