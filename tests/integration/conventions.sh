#!/bin/bash
# tests/integration/conventions.sh - the conventions of a well-behaved CLI:
# --json on every listing command (valid JSON, same content as the table),
# colour only on a terminal and never with NO_COLOR, no escape sequences
# in piped output, data on stdout and diagnostics on stderr.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
unset NO_COLOR

json_ok() { # json_ok TYPE: stdin parses as JSON of that python type
	python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if type(d).__name__ == '$1' else 1)"
}

# profile list --json: the same names as the table.
capture "$SBX" profile list --json
[ "$rc" -eq 0 ] && json_ok list <<<"$out"
ok $? "sbx profile list --json prints a JSON array"
names_json=$(python3 -c 'import json,sys; print("\n".join(sorted(p["name"] for p in json.load(sys.stdin))))' <<<"$out" 2>/dev/null)
names_text=$("$SBX" profile list | awk 'NF {print $1}' | LC_ALL=C sort)
[ -n "$names_json" ] && [ "$names_json" = "$names_text" ]
ok $? "sbx profile list --json names the same profiles as the table"

# ps --json on an empty state directory, then with a kept sandbox.
capture "$SBX" ps --json
[ "$rc" -eq 0 ] && [ -z "$err" ] && json_ok list <<<"$out"
ok $? "sbx ps --json with no sandbox prints a JSON array (rc $rc)"
capture "$SBX" ps -a --json
[ "$rc" -eq 0 ] && [ "$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' <<<"$out" 2>/dev/null)" = 0 ]
ok $? "sbx ps -a --json with no sandbox is []"
"$SBX" run -q --keep --name conv-kept -- true >/dev/null 2>&1
capture "$SBX" ps -a --json
ids=$(python3 -c 'import json,sys; print("\n".join(s["id"] for s in json.load(sys.stdin)))' <<<"$out" 2>/dev/null)
[ "$(lines "$ids")" -eq 1 ]
ok $? "sbx ps -a --json lists the kept sandbox"
capture "$SBX" ps -a
[ -n "$ids" ] && grep -q "^$ids" <<<"$out" && grep -q conv-kept <<<"$out"
ok $? "sbx ps -a shows the same sandbox, id first, with its name"
capture "$SBX" inspect --json conv-kept
[ "$rc" -eq 0 ] && json_ok dict <<<"$out"
ok $? "sbx inspect --json prints one JSON object (rc $rc)"
"$SBX" destroy --all >/dev/null 2>&1

# Piped output: no escape sequences anywhere.
esc=0
for args in "profile list" "profile show default" "ps -a" "help run"; do
	# shellcheck disable=SC2086
	"$SBX" $args 2>&1 | grep -q $'\033' && { diag "escape in: sbx $args"; esc=1; }
done
"$SBX" run -- true 2>&1 | grep -q $'\033' && { diag "escape in the run log"; esc=1; }
ok $esc "no escape sequences in piped output (tables, INI, help, run log)"

# Colour on a terminal only, and never with NO_COLOR: the unpack progress
# bar (shown for tarballs over 64 MiB when stderr is a terminal).
if command -v script >/dev/null; then
	big=$TAP_TMP/big
	mkdir -p "$big/root"
	head -c $((66 << 20)) /dev/zero >"$big/root/zeros"
	tar -C "$big/root" -cf "$big/big.tar" . 2>/dev/null
	tty_run() { # tty_run ENV...: unpack under a pseudo-terminal, print what it showed
		rm -rf "$big/out"
		env "$@" script -qec "'$SBX' image unpack-to '$big/big.tar' '$big/out'" /dev/null 2>&1
	}
	shown=$(tty_run SBX_STATE_DIR="$SBX_STATE_DIR")
	grep -q 'unpacking' <<<"$shown" && grep -q $'\033\\[' <<<"$shown"
	ok $? "on a terminal the progress bar is shown in colour"
	shown=$(tty_run NO_COLOR=1)
	grep -q 'unpacking' <<<"$shown" && ! grep -q $'\033\\[' <<<"$shown"
	ok $? "with NO_COLOR=1 the progress bar has no colour"
	rm -rf "$big/out"
	"$SBX" image unpack-to "$big/big.tar" "$big/out" >"$TAP_TMP/o" 2>"$TAP_TMP/e"
	! grep -q unpacking "$TAP_TMP/e" && ! grep -q $'\033' "$TAP_TMP/e" "$TAP_TMP/o"
	ok $? "when stderr is not a terminal there is no progress bar and no escape"
	rm -rf "$big"
else
	skip "colour checks" "script(1) is not installed"
fi

done_testing
