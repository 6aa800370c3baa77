#!/bin/bash
# sbx-test-timeout: 900  (a first run installs npm and claude-code from the registries)
# tests/integration/agent_claude.sh - Claude Code, the real CLI from the npm
# registry, under `sbx run -p claude`:
#
#   - @anthropic-ai/claude-code is installed with `npm install --prefix` into
#     tests/out/npm-cache/claude-code (reused when already there; SBX_NPM_DIR
#     overrides the place).  Skipped, saying so, only when npm cannot reach
#     its registry.
#   - `claude --version` inside the jail prints the installed version, exit 0.
#   - ANTHROPIC_API_KEY (a fake value) is injected by the proxy as the
#     profile says: the jail holds a placeholder, the key is in no file of
#     the state dir; the documented fallback (--secret NAME=env:VAR) hands
#     the key itself in, redacted in output.log.
#   - at a terminal (script(1)), `sbx run -p claude -- claude` without -t
#     gives it a pty: it draws its interface, not a --print mode error.
#   - claude started interactively under a pty (tmux, `sbx run -t`) tries its
#     API host; the run log (--log-json and the kept sandbox's log.jsonl via
#     `sbx inspect --json`) records CONNECT api.anthropic.com:443 allowed by
#     the profile (the upstream connect fails here: no internet).
#
# As the caller (root), and as nobody (setpriv) when run as root.
. "$(dirname "$0")/../lib/tap.sh"

NPM_DIR=${SBX_NPM_DIR:-$TAP_ROOT/tests/out/npm-cache/claude-code}
CLAUDE=$NPM_DIR/node_modules/.bin/claude
PKG=$NPM_DIR/node_modules/@anthropic-ai/claude-code/package.json

# ensure_cmd CMD PKG: install the Debian package PKG when CMD is missing.
ensure_cmd() {
	command -v "$1" >/dev/null && return 0
	[ "$(id -u)" = 0 ] || return 1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" \
		>/dev/null 2>&1
	command -v "$1" >/dev/null
}

# 1. The CLI, from the npm registry (once; reused from the cache dir).
if ! "$CLAUDE" --version >/dev/null 2>&1; then
	if ! ensure_cmd npm npm; then
		echo "1..0 # SKIP npm is not installed (apt-get install npm) and we are not root"
		exit 77
	fi
	mkdir -p "$NPM_DIR"
	# Asked first, and once: npm install retries an unreachable registry
	# for minutes before it gives up.  A registry that answers does so in
	# well under a second; one that does not costs 20 s, not a minute.
	if ! timeout 20 npm ping --fetch-retries=0 --fetch-timeout=15000 >"$TAP_TMP/npm.log" 2>&1; then
		echo "1..0 # SKIP npm registry unreachable ($(npm config get registry))"
		exit 77
	fi
	if ! timeout 600 npm install --prefix "$NPM_DIR" --no-audit --no-fund \
		@anthropic-ai/claude-code >>"$TAP_TMP/npm.log" 2>&1; then
		sed 's/^/# npm: /' "$TAP_TMP/npm.log" | tail -n 20
		ok 1 "npm install @anthropic-ai/claude-code (the registry answers npm ping)"
		done_testing
	fi
fi
ver=$(jq -r .version "$PKG" 2>/dev/null)
[ -n "$ver" ] && [ "$ver" != null ] && "$CLAUDE" --version >/dev/null 2>&1
ok $? "claude-code $ver installed in ${NPM_DIR#"$TAP_ROOT"/}"

if ! ensure_cmd tmux tmux; then
	echo "# tmux missing and not root: the interactive part is skipped"
fi

# claude_mode MODE: the whole check, as root (MODE=root) or nobody (user).
claude_mode() {
	local mode=$1 T=$TAP_TMP/$1 pre='' key state sock id dir i ev
	mkdir -p "$T/proj" "$T/home/.claude" "$T/state"
	if [ "$mode" = user ]; then
		chown -R 65534:65534 "$T"
		pre="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --"
	fi
	state=$T/state
	key="sk-ant-api03-sbxtest-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')-AA"
	# run ARGS...: sbx run -p claude from the project dir, private HOME and
	# state, the fake key in the environment.
	run() {
		(cd "$T/proj" && env HOME="$T/home" SBX_STATE_DIR="$state" \
			SBX_CACHE_DIR="$T/cache" ANTHROPIC_API_KEY="$key" \
			$pre "$SBX" run -p claude "$@")
	}

	capture run --keep -n version -- "$CLAUDE" --version
	[ "$rc" = 0 ] && [ "$out" = "$ver (Claude Code)" ]
	ok $? "$mode: sbx run -p claude -- claude --version prints '$ver (Claude Code)', exit 0"
	[ "$rc" = 0 ] || diag "rc=$rc out=$out err=$(tail -n 3 <<<"$err")"
	grep -q '^sbx: secrets: ANTHROPIC_API_KEY' <<<"$err" && ! grep -qF "$key" <<<"$err"
	ok $? "$mode: the run log names the secret ANTHROPIC_API_KEY, not its value"

	# The profile has the proxy inject the key: the jail holds a placeholder.
	capture run -q --keep -n secret -- sh -c 'echo "key=$ANTHROPIC_API_KEY"'
	[ "$rc" = 0 ] && [[ "$out" =~ ^key=sbx-placeholder-[0-9a-f]{32}$ ]] && ! grep -qF "$key" <<<"$out"
	ok $? "$mode: the jail's ANTHROPIC_API_KEY is a placeholder, never the key"
	dir=$(ls -d "$state"/sandboxes/*/ 2>/dev/null | while read -r d; do
		grep -q '"name": *"secret"' "$d/record.json" 2>/dev/null && echo "$d"; done)
	[ -n "$dir" ] && grep -qx "$out" "$dir/output.log" && ! grep -rqsaF --exclude=disk.img --exclude-dir=disk-templates "$key" "$state"
	ok $? "$mode: output.log holds the placeholder; no file of the state directory holds the key"
	# The fallback the profile documents: the key itself, redacted in output.log.
	capture run -q --keep -n plain --secret 'ANTHROPIC_API_KEY=env:ANTHROPIC_API_KEY? as env' \
		-- sh -c 'echo "key=$ANTHROPIC_API_KEY"'
	dir=$(ls -d "$state"/sandboxes/*/ 2>/dev/null | while read -r d; do
		grep -q '"name": *"plain"' "$d/record.json" 2>/dev/null && echo "$d"; done)
	[ "$rc" = 0 ] && [ "$out" = "key=$key" ] && [ -n "$dir" ] &&
		grep -qx 'key=\[secret ANTHROPIC_API_KEY\]' "$dir/output.log"
	ok $? "$mode: --secret NAME=env:VAR hands the key itself in; output.log redacts it"

	# Interactive, under a pty: tmux runs sbx run -t, claude draws its UI
	# and tries api.anthropic.com through the proxy.
	if ! command -v tmux >/dev/null; then
		skip "$mode: claude under a pty tries its API host" "tmux missing"
	else
		sock=$T/tmux.sock
		tmux -S "$sock" new-session -d -x 120 -y 40 \
			"cd '$T/proj' && env HOME='$T/home' SBX_STATE_DIR='$state' SBX_CACHE_DIR='$T/cache' \
ANTHROPIC_API_KEY='$key' TERM=xterm-256color $pre '$SBX' run -p claude -t --keep -n tui \
--log-json '$T/tui.jsonl' -- '$CLAUDE' 2>'$T/tui.err'; echo \$? >'$T/tui.rc'; sleep 120"
		# Up to 60 s for the attempt to show in the run log.
		for ((i = 0; i < 120; i++)); do
			grep -q '"host":"api.anthropic.com"' "$T/tui.jsonl" 2>/dev/null && break
			sleep 0.5
		done
		# Claude gives up by itself once the API is unreachable; if it
		# still waits, interrupt it (the jail gets the signal).
		for ((i = 0; i < 40; i++)); do [ -s "$T/tui.rc" ] && break; sleep 0.5; done
		tmux -S "$sock" capture-pane -p >"$T/pane.txt" 2>/dev/null
		if [ ! -s "$T/tui.rc" ]; then
			tmux -S "$sock" send-keys C-c 2>/dev/null
			sleep 1
			tmux -S "$sock" send-keys C-c 2>/dev/null
			for ((i = 0; i < 40; i++)); do [ -s "$T/tui.rc" ] && break; sleep 0.5; done
		fi
		tmux -S "$sock" kill-server 2>/dev/null
		for ((i = 0; i < 20; i++)); do [ -s "$T/tui.rc" ] && break; sleep 0.5; done
		grep -q 'Claude Code' "$T/pane.txt"
		ok $? "$mode: claude draws its interface on the pty (sbx run -t)"
		[ $? = 0 ] || diag "pane: $(tr -s ' \n' ' ' <"$T/pane.txt" | head -c 400)"
		grep -v '^$' "$T/pane.txt" | tail -n 4 | sed 's/^/# pane: /'

		ev=$(jq -c 'select(.event == "net" and .host == "api.anthropic.com")' \
			"$T/tui.jsonl" 2>/dev/null | head -n 1)
		[ -n "$ev" ] && jq -e '.port == 443 and .allowed == true and .method == "CONNECT"' \
			<<<"$ev" >/dev/null
		ok $? "$mode: --log-json records CONNECT api.anthropic.com:443, allowed by the profile"
		diag "event: $ev"
		id=$(jq -r 'select(.event == "start") | .id' "$T/tui.jsonl" 2>/dev/null)
		capture env SBX_STATE_DIR="$state" "$SBX" inspect --json "${id:-none}"
		[ "$rc" = 0 ] && jq -e '[.network_events[] | select(.host == "api.anthropic.com"
			and .port == 443 and .allowed == true)] | length >= 1' <<<"$out" >/dev/null
		ok $? "$mode: the kept sandbox's record (inspect --json) has the same event"
		# Other hosts claude tried, for the profile's allowlist.
		jq -r 'select(.event == "net") | "# net: \(.method) \(.host):\(.port) allowed=\(.allowed) \(.reason)"' \
			"$T/tui.jsonl" 2>/dev/null | sort -u
		# Allowed by the profile; here the API itself is out of reach, so
		# the connection is counted as failed, not as one that got through.
		res=$(jq -r '.result' <<<"$ev" 2>/dev/null)
		foot=$(grep -E '^sbx: network: [0-9]+ connections? allowed, [0-9]+ failed, [0-9]+ denied(;.*)?$' "$T/tui.err")
		a=$(sed -E 's/^sbx: network: ([0-9]+) .*/\1/' <<<"$foot")
		f=$(sed -E 's/.*allowed, ([0-9]+) failed.*/\1/' <<<"$foot")
		[ -n "$foot" ] && { { [ "$res" = ok ] && [ "$a" -ge 1 ]; } || { [ "$res" = failed ] && [ "$f" -ge 1 ]; }; }
		ok $? "$mode: the footer counts the connection as what it was ($res: $foot)"
		[ $? = 0 ] || diag "footer: $(grep 'network:' "$T/tui.err")"
	fi

	# The README's own line at a terminal, without -t: sbx gives claude a
	# pty (tty = auto), so it starts its interface; with pipes it took its
	# input as a one-shot prompt ("Input must be provided either through
	# stdin or as a prompt argument when using --print"), exit 1.
	if ! command -v script >/dev/null; then
		skip "$mode: at a terminal, claude without -t starts its interface" "script(1) missing"
	else
		out=$(cd "$T/proj" && env HOME="$T/home" SBX_STATE_DIR="$state" SBX_CACHE_DIR="$T/cache" \
			ANTHROPIC_API_KEY="$key" TERM=xterm-256color timeout 90 $pre \
			script -qec "'$SBX' run -q --rm -p claude -- '$CLAUDE'" /dev/null \
			</dev/null 2>&1)
		# (it ends by itself here, its API out of reach; its words are
		# placed with cursor moves: "Welcome\e[9Gto\e[12GClaude")
		grep -q 'Welcome.*to.*Claude' <<<"$out" && ! grep -q 'Input must be provided' <<<"$out"
		ok $? "$mode: at a terminal, sbx run -p claude -- claude (no -t) starts its interface"
		[ $? = 0 ] || diag "$(tr -s ' \r\n' ' ' <<<"$out" | head -c 400)"
	fi

	# The value is in no file under the state dir (records, logs, output,
	# the writable layers of all three sandboxes), nor in the run logs.
	# (As root a kept sandbox's layers are an ext4 image, disk.img, the
	# size of the disk cap: what is in it is read through export.)
	local sb leak=
	for sb in "$state"/sandboxes/*/; do
		[ -f "$sb/disk.img" ] || continue
		env SBX_STATE_DIR="$state" $pre "$SBX" export "$(basename "$sb")" -o - 2>/dev/null |
			grep -qaF "$key" && leak="$leak $(basename "$sb")"
	done
	[ "$(ls "$state/sandboxes" | wc -l)" -ge 2 ] && [ -z "$leak" ] &&
		! grep -rqsaF --exclude=disk.img --exclude-dir=disk-templates "$key" "$state" "$T/tui.jsonl" "$T/tui.err"
	ok $? "$mode: the key's value is in no file under the state dir nor in the run logs"
	env SBX_STATE_DIR="$state" $pre "$SBX" destroy --all >/dev/null 2>&1
	return 0
}

claude_mode "$(id -un)"
if [ "$(id -u)" = 0 ]; then
	claude_mode user
else
	skip "as nobody" "not root (setpriv needs root)"
fi
done_testing
