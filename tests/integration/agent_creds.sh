#!/bin/bash
# tests/integration/agent_creds.sh - one agent never reads another's login.
# A home holds every coding agent's credential files (world-readable, so
# that only the profile decides); from every built-in profile each file is
# read: an agent profile reads its own agent's and no other, the others
# read none.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_setup_busybox

H=$BASE/home
# file -> the profile whose agent owns it ("" = none of the built-ins)
declare -A OWNER=(
	[.claude/.credentials.json]=claude [.claude.json]=claude
	[.codex/auth.json]=codex
	[.gemini/oauth_creds.json]=gemini [.gemini/google_accounts.json]=gemini [.gemini/.env]=gemini
	[.config/goose/secrets.yaml]=goose
	[.local/share/opencode/auth.json]= [.config/github-copilot/hosts.json]= [.aider.conf.yml]=
)
for f in "${!OWNER[@]}"; do
	mkdir -p "$H/$(dirname "$f")"
	echo "secret-of-$f" >"$H/$f"
done
chmod -R a+rX "$H"
chown -R "$UID_U:$UID_U" "$H"
FILES=$(printf '%s\n' "${!OWNER[@]}" | sort)
# One jail per profile reads every file and prints the ones it could.
probe='for f in '$(echo $FILES)'; do [ "$(cat "$HOME/$f" 2>/dev/null)" = "secret-of-$f" ] && echo "$f"; done; true'

PROFILES=$("$SBX" profile list | awk '{print $1}')
[ -n "$PROFILES" ] && grep -qx claude <<<"$PROFILES" && grep -qx default <<<"$PROFILES"
ok $? "the built-in profiles are listed ($(echo $PROFILES))"

for mode in $MODES; do
	for p in $PROFILES; do
		extra=()
		"$SBX" profile show "$p" | grep -qx 'rootfs = required' && extra=(--rootfs "$IMG")
		want=
		for f in $FILES; do [ "${OWNER[$f]}" = "$p" ] && want="$want$f "; done
		want_desc=${want:-"no agent's credentials"}
		capture sbx_as_mode_in "$WD" $mode env HOME="$H" "$SBX" run -q --rm -p "$p" "${extra[@]}" \
			--net none -- sh -c "$probe"
		got=$(printf '%s\n' "$out" | grep . | tr '\n' ' ')
		[ "$rc" -eq 0 ] && [ "$got" = "$want" ]
		ok $? "$mode: -p $p reads $want_desc (read: ${got:-none}; $rc $err)"
	done
done

# A profile of one's own can un-hide what it needs, and only that.
printf '[sandbox]\nextends = gemini\n[filesystem]\nunmask = ~/.codex\n' >"$BASE/mine.ini"
chmod 0644 "$BASE/mine.ini"
capture sbx_as_mode_in "$WD" user env HOME="$H" "$SBX" run -q --rm -p "$BASE/mine.ini" --net none -- sh -c "$probe"
got=$(printf '%s\n' "$out" | grep . | tr '\n' ' ')
[ "$got" = ".codex/auth.json .gemini/.env .gemini/google_accounts.json .gemini/oauth_creds.json " ]
ok $? "unmask = ~/.codex in a profile extending gemini shows codex's login too ($got)"

done_testing
