#!/bin/bash
# tests/integration/profile.sh - sbx profile list / show / check on the real
# binary: built-ins, resolved output and its round trip, errors naming
# file:line with suggestions, exit statuses 0/1/2, --help.
. "$(dirname "$0")/../lib/tap.sh"
export SBX_STATE_DIR=$TAP_TMP/state SBX_CACHE_DIR=$TAP_TMP/cache
W=$TAP_TMP/work
mkdir -p "$W/sub" "$TAP_TMP/home"
cd "$W" || exit 1
export HOME=$TAP_TMP/home

# ---- list
capture "$SBX" profile list
ok $rc "profile list exits 0"
ok $((${#err} != 0)) "profile list prints nothing on stderr"
for f in "$TAP_ROOT"/profiles/*.ini; do
	p=$(basename "$f" .ini)
	summary=$(head -n1 "$f" | sed -e 's/^# *//' -e "s/^$p: //")
	printf '%s\n' "$out" | grep -Fqx "$(printf '%-10s %s' "$p" "$summary")"
	ok $? "profile list shows '$p' with its summary line"
done
for p in default agent ci strict claude codex gemini goose; do
	printf '%s\n' "$out" | grep -q "^$p "
	ok $? "built-in profile '$p' exists"
done
capture "$SBX" profile list --json
ok $rc "profile list --json exits 0"
names=$(printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin) if p["summary"]))')
ok $? "profile list --json is a JSON array of {name, summary}"
[ "$names" = "$(cd "$TAP_ROOT/profiles" && ls *.ini | sed 's/\.ini$//' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')" ]
ok $? "profile list --json names every built-in ($names)"

# ---- check: every built-in, by name
capture "$SBX" profile check default agent ci strict claude codex gemini goose
ok $rc "profile check of every built-in exits 0"
[ "$(printf '%s\n' "$out" | grep -c ': ok$')" -eq 8 ] && [ -z "$err" ]
ok $? "profile check prints 'NAME: ok' for each built-in"

# ---- show
capture "$SBX" profile show default
ok $rc "profile show default exits 0"
printf '%s\n' "$out" | grep -Fqx "overlay = $W"
ok $? "show default: the working directory is a copy-on-write overlay (\$PWD expanded)"
printf '%s\n' "$out" | grep -Fqx "mask = $HOME/.ssh"
ok $? "show default: ~/.ssh masked (~ expanded from \$HOME)"
# $USER and $UID: the caller's name (looked up only when a profile uses it)
# and id, whatever $USER says in the environment
printf '[env]\nset = WHO=$USER\nset = WHOID=$UID\n' >"$TAP_TMP/user.ini"
capture env USER=someone-else "$SBX" profile show "$TAP_TMP/user.ini"
printf '%s\n' "$out" | grep -Fqx "set = WHO=$(id -un)" && printf '%s\n' "$out" | grep -Fqx "set = WHOID=$(id -u)"
ok $? "show: \$USER is the caller's name from the user database, \$UID its id ($(printf '%s\n' "$out" | grep '^set = WHO' | tr '\n' ' '))"
if [ "$(id -u)" -eq 0 ]; then
	chmod 0644 "$TAP_TMP/user.ini"
	capture setpriv --reuid=65534 --regid=65534 --clear-groups -- env USER=root "$SBX" profile show "$TAP_TMP/user.ini"
	printf '%s\n' "$out" | grep -Fqx "set = WHO=$(id -un 65534)"
	ok $? "show as uid 65534: \$USER is $(id -un 65534) ($(printf '%s\n' "$out" | grep '^set = WHO=' ) $err)"
fi
capture "$SBX" profile show default
printf '%s\n' "$out" | grep -Fqx "tmpfs = /tmp" &&
	printf '%s\n' "$out" | grep -Fqx "mode = none" &&
	printf '%s\n' "$out" | grep -Fqx "persist = on-failure" &&
	printf '%s\n' "$out" | grep -Fqx "user = inherit" &&
	printf '%s\n' "$out" | grep -Fqx "rootfs = host"
ok $? "show default: private /tmp, no network, persist on-failure, invoking user, host root"

capture "$SBX" profile show ci
printf '%s\n' "$out" | head -n1 | grep -Fq "resolved from: builtin:default builtin:ci"
ok $? "show ci names its sources in order (extends resolved)"
printf '%s\n' "$out" | grep -Fqx "memory = 4g" && printf '%s\n' "$out" | grep -Fqx "time = 30m" &&
	printf '%s\n' "$out" | grep -Fqx "overlay = $W"
ok $? "show ci: its limits plus default's mounts"

capture "$SBX" profile show strict
printf '%s\n' "$out" | grep -Fqx "rootfs = required" && printf '%s\n' "$out" | grep -Fqx "seccomp = strict" &&
	! printf '%s\n' "$out" | grep -Eq "^(bind|ro-bind|overlay|mask) = "
ok $? "show strict: rootfs required, strict seccomp, no host paths"

capture "$SBX" profile show claude
printf '%s\n' "$out" | grep -Fqx "allow = api.anthropic.com" &&
	printf '%s\n' "$out" | grep -Fqx "bind = $W" &&
	printf '%s\n' "$out" | grep -Fqx "bind = -$HOME/.claude" &&
	printf '%s\n' "$out" | grep -Fqx "ANTHROPIC_API_KEY = env:ANTHROPIC_API_KEY? as env inject api.anthropic.com" &&
	printf '%s\n' "$out" | grep -Fqx "mode = proxy"
ok $? "show claude: API host allowed, project and ~/.claude writable, key an optional secret the proxy injects for api.anthropic.com"

# Round trip: the shown profile is accepted and shows the same.
for p in default ci strict claude goose; do
	"$SBX" profile show "$p" >"$TAP_TMP/$p.shown.ini" 2>/dev/null
	capture "$SBX" profile check "$TAP_TMP/$p.shown.ini"
	r=$rc
	"$SBX" profile show "$TAP_TMP/$p.shown.ini" 2>/dev/null | tail -n +2 >"$TAP_TMP/$p.again"
	tail -n +2 "$TAP_TMP/$p.shown.ini" | cmp -s - "$TAP_TMP/$p.again"
	ok $((r | $?)) "profile show $p round-trips through check and show"
done

# ---- a profile with a typo: file:line, key, suggestion; exit 1
cat >typo.ini <<'EOF'
# a CI profile with a typo
[limits]
memroy = 2g
pids = 100
EOF
capture "$SBX" profile check typo.ini
ok $((rc != 1)) "check of a typo profile exits 1 (got $rc)"
[ "$err" = "sbx: 'typo.ini:3': unknown key 'memroy' in [limits] (did you mean 'memory'?)" ]
ok $? "the error names typo.ini:3, the key and suggests 'memory' ($err)"
ok $((${#out} != 0)) "nothing on stdout for a bad profile"

cat >many.ini <<'EOF'
[sandbox]
persist = sometimes
[limit]
[network]
allow = good.example.com bad_host!
[limits]
time = 5 parsecs
[filesystem]
bind = $NOPE/x
EOF
capture "$SBX" profile check many.ini
ok $((rc != 1)) "check of a profile with five errors exits 1"
[ "$(lines "$err")" -eq 5 ]
ok $? "every error is reported, one line each ($(lines "$err") lines)"
for want in \
	"sbx: 'many.ini:2': key 'persist': bad persist mode 'sometimes'" \
	"sbx: 'many.ini:3': unknown section [limit] (did you mean [limits]?)" \
	"sbx: 'many.ini:5': key 'allow': bad allow entry 'bad_host!'" \
	"sbx: 'many.ini:7': key 'time': bad duration '5 parsecs'" \
	"sbx: 'many.ini:9': key 'bind': unknown variable '\$NOPE'"; do
	printf '%s\n' "$err" | grep -Fq "$want"
	ok $? "error: $want"
done

# Good and bad together: ok for the good one, exit 1 overall.
printf '[sandbox]\nextends = ci\n[limits]\nmemory = 1g\n' >good.ini
capture "$SBX" profile check good.ini typo.ini
ok $((rc != 1)) "check good.ini typo.ini exits 1"
[ "$out" = "good.ini: ok" ]
ok $? "check prints 'good.ini: ok' for the good one"
capture "$SBX" profile check good.ini
[ $rc -eq 0 ] && [ "$out" = "good.ini: ok" ]
ok $? "check of a good profile exits 0 with 'good.ini: ok'"
capture "$SBX" profile show good.ini
printf '%s\n' "$out" | grep -Fqx "memory = 1g" && printf '%s\n' "$out" | grep -Fqx "pids = 1024"
ok $? "a child overrides its parent (memory) and inherits the rest (pids)"

# Missing file, missing built-in, extends problems.
capture "$SBX" profile check nope.ini
ok $((rc != 1)) "check of a missing file exits 1"
[ "$err" = "sbx: cannot read profile 'nope.ini': No such file or directory" ]
ok $? "missing file named ($err)"
capture "$SBX" profile show defualt
[ $rc -eq 1 ] && [ "$err" = "sbx: unknown profile 'defualt' (did you mean 'default'?)" ]
ok $? "show of an unknown built-in exits 1 with a suggestion ($err)"
printf '[sandbox]\nextends = ../loop-b.ini\n' >sub/loop-a.ini
printf '[sandbox]\nextends = sub/loop-a.ini\n' >loop-b.ini
capture "$SBX" profile check loop-b.ini
[ $rc -eq 1 ] &&
	[ "$err" = "sbx: 'sub/loop-a.ini:2': extends cycle: loop-b.ini -> sub/loop-a.ini -> sub/../loop-b.ini" ]
ok $? "an extends cycle is an error showing the chain ($err)"
printf '[sandbox]\nextends = ../good.ini\nhostname = sub\n' >sub/rel.ini
capture "$SBX" profile show sub/rel.ini
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -Fqx "memory = 1g" &&
	printf '%s\n' "$out" | head -n1 | grep -Fq "builtin:default builtin:ci sub/../good.ini sub/rel.ini"
ok $? "extends of a path is relative to the including file"
printf '[sandbox]\nextends = stricct\n' >bad-ext.ini
capture "$SBX" profile check bad-ext.ini
[ "$err" = "sbx: 'bad-ext.ini:2': extends: unknown built-in profile 'stricct' (did you mean 'strict'?)" ]
ok $? "extends of a missing built-in names it ($err)"

# Relative paths in a profile are relative to its directory.
mkdir -p sub/img
printf '[sandbox]\nrootfs = img\n[limits]\nmemory = 1g # inline comment\n' >sub/img.ini
capture "$SBX" profile show sub/img.ini
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -Fqx "rootfs = $W/sub/img" &&
	printf '%s\n' "$out" | grep -Fqx "memory = 1g"
ok $? "rootfs = img in sub/img.ini is $W/sub/img; inline comments are dropped"

# ---- the default profile hides the host's Unix sockets in /run (docker.sock,
# D-Bus, /run/user...): a read-only root alone would let the jail connect.
# Creating a socket in /run needs root; a control socket elsewhere on the
# read-only host root must stay reachable, so the check can fail.
if [ "$(id -u)" -eq 0 ] && command -v python3 >/dev/null; then
	sockdir=$TAP_ROOT/tests/out/profile-sock.$$
	mkdir -p "$sockdir"
	hidden=/run/sbx-test-$$.sock ctl=$sockdir/ctl.sock
	python3 - "$hidden" "$ctl" <<'PY' &
import os, socket, sys, select
socks = []
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    os.chmod(path, 0o777)
    s.listen(8)
    socks.append(s)
end = 30
while end > 0:
    r, _, _ = select.select(socks, [], [], 1)
    end -= 1
    for s in r:
        c, _ = s.accept()
        c.send(b"HELLO")
        c.close()
PY
	server=$!
	# python3 may take seconds to start on a loaded machine: wait for both
	for _ in $(seq 100); do [ -S "$ctl" ] && [ -S "$hidden" ] && break; sleep 0.1; done
	probe='import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("reached")
except OSError as e:
    print("refused", e.errno)'
	capture "$SBX" run -q -p default -- python3 -c "$probe" "$ctl"
	[ "$out" = "reached" ]
	ok $? "control: a socket elsewhere on the host root is reachable ($out $err)"
	capture "$SBX" run -q -p default -- python3 -c "$probe" "$hidden"
	[ "$out" = "refused 2" ]
	ok $? "default profile: a host socket in /run is hidden ($out $err)"
	capture "$SBX" run -q -p agent -- python3 -c "$probe" "$hidden"
	[ "$out" = "refused 2" ]
	ok $? "agent profile: a host socket in /run is hidden ($out $err)"
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	rm -rf "$sockdir" "$hidden"
else
	skip "default profile hides host sockets in /run" "needs root to create a socket in /run"
fi

# ---- usage errors: exit 2
for args in "" "check" "show" "show a b" "bogus" "list extra" "list --bogus" "show --json x"; do
	# shellcheck disable=SC2086
	capture "$SBX" profile $args
	ok $((rc != 2)) "'sbx profile $args' is a usage error, exit 2 (got $rc)"
done
capture "$SBX" profile lst
[[ $err == *"unknown profile command 'lst' (did you mean 'list'?)"* ]]
ok $? "a mistyped subcommand suggests the right one"

# ---- --help everywhere: stdout, exit 0
for args in "--help" "list --help" "show --help" "check --help" "check -h"; do
	# shellcheck disable=SC2086
	capture "$SBX" profile $args
	[ $rc -eq 0 ] && [[ $out == "usage: sbx profile"* ]] && [ -z "$err" ]
	ok $? "'sbx profile $args' prints usage on stdout, exit 0"
done
capture "$SBX" help profile
[ $rc -eq 0 ] && [[ $out == "usage: sbx profile"* ]]
ok $? "'sbx help profile' prints the profile usage"

# ---- the proxy's allowlist rules are checked with the profile's file:line
printf '[network]\nmode = proxy\nallow = example.org\nallow = *.com\n' > "$TAP_TMP/widecard.ini"
capture "$SBX" profile check "$TAP_TMP/widecard.ini"
[ $rc -eq 1 ] && [[ $err == *"widecard.ini:4"* ]] && [[ $err == *"*.com"* ]]
ok $? "an allow entry the proxy would refuse ('*.com') fails profile check at file:line ($err)"

# ---- the default profile works from '/': its '$PWD' overlay of '/' is a no-op
capture sh -c "cd / && exec '$SBX' profile show default"
[ $rc -eq 0 ] && ! grep -q '^overlay = /$' <<<"$out"
ok $? "from '/', 'overlay = \$PWD' resolves to nothing instead of an error (rc $rc, $err)"

done_testing
