#!/bin/bash
# tests/integration/run_hidden_mount.sh - a command line's mount at the
# place of a profile's replaces it.  `sbx run -p agent --overlay .` (the
# project copy-on-write for once, as README shows) listed the project as
# "shared: P (bind rw ...)" and as "P copy-on-write", with the .git
# read-only line of a bind the jail only made to cover it; `--bind .` on
# the default profile made the overlay under it.  Now only the later mount
# is made and said; a later optional mount whose source is missing leaves
# the earlier one; a profile's mask below still hides.  As root (an
# idmapped project) and as an ordinary user.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools jq
sbx_modes
sbx_base

for mode in $MODES; do
	if [ "$mode" = root ]; then owner=4242:4343; else owner=$UID_U:$UID_U; fi
	P=$BASE/$mode/proj
	mkdir -p "$P/.git" && echo v1 >"$P/file" && echo topsecret >"$P/secret" && chown -R "$owner" "$P" &&
		chmod 0755 "$BASE/$mode" "$P"

	# the agent profile's read-write bind, then --overlay .
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run --keep -n "ov-$mode" -p agent --net none --overlay . -- \
		sh -c 'echo v2 >file && echo new >new && echo written'
	fs=$(grep '^sbx: filesystem:' <<<"$err")
	[ "$rc" = 0 ] && [ "$out" = written ] && [ "$(cat "$P/file")" = v1 ] && [ ! -e "$P/new" ] &&
		[[ "$fs" == *"$P copy-on-write; nothing shared with the host read-write"* ]] &&
		[[ "$fs" != *"shared: $P"* ]] && [[ "$fs" != *".git read-only"* ]]
	ok $? "$mode: -p agent --overlay .: the project copy-on-write, and only that said ($rc: $fs)"
	kinds=$(sbx_as_mode "$mode" "$SBX" inspect --json "ov-$mode" |
		jq -c --arg p "$P" '[.policy.filesystem.mounts[] | select(.dst == $p) | .kind]')
	diff=$(sbx_as_mode "$mode" "$SBX" diff "ov-$mode" 2>&1)
	[ "$kinds" = '["overlay"]' ] && [[ "$diff" == *"+++ b/file"*"+v2"*"+++ b/new"* ]]
	ok $? "$mode: the record names one mount there, and diff shows the changes ($kinds: $diff)"
	sbx_as_mode "$mode" "$SBX" destroy "ov-$mode" >/dev/null

	# the default profile's overlay, then --bind .
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -- sh -c 'echo v3 >file && echo written'
	fs=$(grep '^sbx: filesystem:' <<<"$err")
	[ "$rc" = 0 ] && [ "$out" = written ] && [ "$(cat "$P/file")" = v1 ]
	ok $? "$mode: the default profile: the project copy-on-write ($rc: $fs)"
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run --bind . -- sh -c 'echo v3 >file && echo written'
	fs=$(grep '^sbx: filesystem:' <<<"$err")
	[ "$rc" = 0 ] && [ "$out" = written ] && [ "$(cat "$P/file")" = v3 ] &&
		[[ "$fs" == *"shared: $P (bind rw"* ]] && [[ "$fs" != *"$P copy-on-write"* ]]
	ok $? "$mode: --bind . over the default profile's overlay: written, and said once ($rc: $fs)"

	# a profile's mask in the project still hides with --overlay .
	cat >"$BASE/m-$mode.ini" <<EOF
[sandbox]
extends = agent
[filesystem]
mask = $P/secret
EOF
	chmod 0644 "$BASE/m-$mode.ini"
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -q -p "$BASE/m-$mode.ini" --net none --overlay . -- \
		cat secret
	[ "$rc" = 0 ] && [ -z "$out" ]
	ok $? "$mode: a profile's mask in the project still hides with --overlay . ($rc: $out $err)"

	# a later optional overlay whose source is missing: the bind stays
	capture sbx_as_mode_in "$P" "$mode" "$SBX" run -p agent --net none --overlay "-$BASE/$mode/nope:$P" -- \
		sh -c 'echo v4 >file && echo written'
	fs=$(grep '^sbx: filesystem:' <<<"$err")
	[ "$rc" = 0 ] && [ "$out" = written ] && [ "$(cat "$P/file")" = v4 ] && [[ "$fs" == *"shared: $P (bind rw"* ]]
	ok $? "$mode: a later optional mount that is not made leaves the bind ($rc: $fs)"
done

done_testing
