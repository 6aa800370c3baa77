#!/bin/bash
# tests/integration/run_idmap_bind.sh - the sudo case: sbx run as root in a
# project an ordinary user owns.  A read-write bind (the agent profiles'
# project, an agent's config directory) of a directory an ordinary user
# owns is written as that user: files the jail makes are theirs on the
# host, the jail sees the project as its own (git, npm work); a directory
# root owns stays read-only, said once in the run log; nothing the jail
# does there makes a root-owned file.  Unprivileged, the same commands
# write as the calling user, as before.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (this is the sudo case; the unprivileged half runs through setpriv)"
	exit 77
fi
need_tools jq
sbx_base
sbx_host_base
export SBX_STATE_DIR=$BASE/state SBX_CACHE_DIR=$BASE/cache

# A user's project (uid 4242, no passwd entry, group 4343) and one owned
# by nobody, an agent config directory of that user, a root-owned one.
P=$BASE/alice/proj
mkdir -p "$P/sub" "$BASE/alice/.codex" "$BASE/rootproj"
echo hello >"$P/README"
echo root-file >"$P/owned-by-root"
chown -R 4242:4343 "$BASE/alice"
chown 0:0 "$P/owned-by-root"
chmod 0755 "$BASE/alice" "$P"
chmod 0644 "$P/owned-by-root"

run_in() { # DIR ARGS...: sbx run as root in DIR
	local d=$1
	shift
	(cd "$d" && "$SBX" run "$@")
}

capture run_in "$P" -p agent --net none -- sh -c '
	stat -c "%u:%g" . README; touch new && mkdir -p made/deeper && echo x >made/deeper/f &&
	echo more >>README && mv new renamed && echo ok'
[ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -1)" = ok ] &&
	[ "$(printf '%s\n' "$out" | head -2 | tr '\n' ' ')" = "0:0 0:0 " ]
ok $? "root, -p agent: the jail's root owns and writes the user's project ($rc: $out $err)"
bad=$(find "$P" ! -uid 4242 ! -path "$P/owned-by-root")
[ -z "$bad" ] && [ "$(stat -c %u:%g "$P/renamed" "$P/made/deeper/f" | sort -u)" = 4242:4343 ] &&
	[ "$(tail -1 "$P/README")" = more ]
ok $? "root, -p agent: what the jail made is owned by the project's owner on the host ($bad)"
[[ "$err" == *"shared: $P (bind rw, written as its owner uid 4242)"* ]] &&
	[[ "$err" != *"read-only in the jail"* ]]
ok $? "root, -p agent: the run log says the project is written as its owner"

capture run_in "$P" -p agent --net none -- sh -c 'echo x >>owned-by-root; stat -c %u owned-by-root'
[ "$(cat "$P/owned-by-root")" = root-file ] && [ "$out" = 65534 ]
ok $? "root, -p agent: a root-owned file in the project shows as nobody and stays unwritten ($out)"

capture run_in "$P" -p agent --net none -- sh -c 'chown 0:0 renamed; chmod u+s renamed; touch s; chmod 4755 s; ls -n s'
[ -z "$(find "$P" -uid 0 ! -path "$P/owned-by-root")" ] && [ -z "$(find "$P" -gid 0 ! -path "$P/owned-by-root")" ] &&
	[ "$(stat -c %u "$P/renamed")" = 4242 ]
ok $? "root, -p agent: chown to root and setuid leave no root-owned file on the host"

capture run_in "$P" -p agent --net none -- sh -c '
	git init -q . && git -c user.name=t -c user.email=t@e add README &&
	git -c user.name=t -c user.email=t@e commit -qm first && git status --short | head -3; git log --oneline | wc -l'
[ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -1)" = 1 ] && [[ "$err" != *dubious* ]] &&
	[ -z "$(find "$P/.git" ! -uid 4242)" ]
ok $? "root, -p agent: git init, add and commit in the project, no dubious ownership ($rc: $err)"
capture git -C "$P" -c safe.directory='*' log --oneline
[ "$(lines "$out")" = 1 ]
ok $? "root, -p agent: the commit is there on the host ($out)"

if command -v npm >/dev/null; then
	mkdir -p "$BASE/localpkg" && printf '{"name":"localpkg","version":"1.0.0"}\n' >"$BASE/localpkg/package.json"
	chmod -R a+rX "$BASE/localpkg"
	capture run_in "$P" -p agent --net none --ro-bind "$BASE/localpkg" -e HOME=/tmp -- sh -c \
		'npm init -y >/dev/null && npm install --offline --no-audit --no-fund '"$BASE/localpkg"' >/dev/null && ls node_modules'
	[ "$rc" -eq 0 ] && [ "$out" = localpkg ] && [ "$(stat -c %u "$P/node_modules" "$P/package.json" | sort -u)" = 4242 ]
	ok $? "root, -p agent: npm install writes node_modules as the project's owner ($rc: $out $err)"
else
	skip "root, -p agent: npm install in the project" "npm is not installed"
fi

# The default profile: the project is copy-on-write, and its view is the
# jail's user's too (sudo sbx run -- make in a user's project).
before=$(cd "$P" && find . -printf '%p %u %s\n' | sort | md5sum)
capture run_in "$P" -q --name cow --net none -- sh -c '
	stat -c %u .; echo x >cow-new && echo more >>README && mkdir -p made2 && git status --short >/dev/null && echo ok; exit 3'
[ "$(printf '%s\n' "$out" | head -1)" = 0 ] && [ "$(printf '%s\n' "$out" | tail -1)" = ok ] &&
	[ "$(cd "$P" && find . -printf '%p %u %s\n' | sort | md5sum)" = "$before" ]
ok $? "root, default profile: the user's project is writable copy-on-write, the host's untouched ($out $err)"
capture "$SBX" inspect --changes cow
grep -q "^A $P/cow-new$" <<<"$out" && grep -q "^C $P/README$" <<<"$out"
ok $? "root, default profile: inspect --changes lists what it changed ($out)"
capture "$SBX" exec cow sh -c 'cat cow-new; echo again >>cow-new'
[ "$rc" -eq 0 ] && [ "$out" = x ]
ok $? "root, default profile: exec into the kept sandbox writes its copy-on-write view ($rc: $err)"

# An agent's config directory in the user's home, bound read-write.
capture env HOME="$BASE/alice" sh -c "cd '$P' && '$SBX' run -q -p codex --net none -- sh -c 'echo tok >\"\$HOME/.codex/auth.json\" && echo ok'"
[ "$out" = ok ] && [ "$(stat -c %u "$BASE/alice/.codex/auth.json")" = 4242 ]
ok $? "root, -p codex: the agent's config directory is written as its owner ($out $err)"

# A project root owns: read-only, said once, nothing written.
capture run_in "$BASE/rootproj" -p agent --net none -- sh -c 'touch x; echo $?'
[ "$out" = 1 ] && [ ! -e "$BASE/rootproj/x" ] &&
	[ "$(grep -c "the project '$BASE/rootproj' is read-only in the jail: root owns it" <<<"$err")" = 1 ] &&
	[[ "$err" == *"run sbx as the user who should own the changes, or chown the directory"* ]]
ok $? "root, -p agent: a root-owned project stays read-only and the run log says so once ($out)"
capture run_in "$BASE/rootproj" -p agent --net none -- ls -a
[ "$rc" -eq 0 ]
ok $? "root, -p agent: a root-owned project is still readable ($rc)"
# An ordinary user's directory in group root (an image's or a container's
# files: uid 4242, no passwd entry, gid 0): read-only too, since the jail
# never writes as root's group, and said so: not "root owns it".
mkdir -p "$BASE/g0proj" && chown 4242:0 "$BASE/g0proj" && chmod 0755 "$BASE/g0proj"
capture run_in "$BASE/g0proj" -p agent --net none --keep -n g0 -- sh -c 'touch x; echo $?'
fs=$(grep '^sbx: filesystem:' <<<"$err")
rec=$("$SBX" inspect --json g0 | jq -r --arg p "$BASE/g0proj" '.policy.filesystem.mounts[] | select(.src == $p) | .read_only')
text=$("$SBX" inspect g0)
[ "$out" = 1 ] && [ ! -e "$BASE/g0proj/x" ] && [[ "$err" != *"root owns it"* ]] && [[ "$text" != *"root owns it"* ]] &&
	[[ "$fs" == *"shared: $BASE/g0proj (bind rw; read-only: its group is root, and its owner uid 4242 has no group of its own)"* ]] &&
	[ "$(grep -c "the project '$BASE/g0proj' is read-only in the jail: its group is root, and its owner uid 4242 has no group of its own; a jail never writes as host root's group; to let the jail write it, chgrp it to the group its files should have (sbx then writes it as uid 4242 and that group)" <<<"$err")" = 1 ] &&
	[ "$rec" = "its group is root, and its owner uid 4242 has no group of its own" ] &&
	[[ "$text" == *"$BASE/g0proj, read-only: its group is root, and its owner uid 4242 has no group of its own"* ]]
ok $? "root, -p agent: a project in group root whose owner has no group stays read-only, and the run log, record and inspect say why ($out: $err)"
"$SBX" destroy g0 >/dev/null
chgrp 4343 "$BASE/g0proj"
capture run_in "$BASE/g0proj" -q -p agent --net none -- sh -c 'touch x; echo $?'
[ "$out" = 0 ] && [ "$(stat -c %u:%g "$BASE/g0proj/x")" = 4242:4343 ]
ok $? "root, -p agent: after the chgrp the run log asks for, it is written as its owner ($out: $err)"
# A world-writable root-owned directory is a plain bind: not root's rights.
mkdir -m 1777 "$BASE/shared"
capture run_in "$BASE/shared" -p agent --net none -- sh -c 'touch x'
[ "$rc" -eq 0 ] && [ "$(stat -c %u "$BASE/shared/x")" = "$HOST_BASE" ] && [[ "$err" != *"read-only in the jail"* ]]
ok $? "root: a world-writable root-owned bind is written as the jail's unprivileged uid"

# The same project as nobody (unprivileged): written as nobody.
mkdir -p "$BASE/nob" && chown 65534:65534 "$BASE/nob"
capture sbx_as_mode_in "$BASE/nob" user "$SBX" run -q -p agent --net none -- sh -c 'touch f && stat -c %u .'
[ "$rc" -eq 0 ] && [ "$(stat -c %u "$BASE/nob/f")" = 65534 ]
ok $? "nobody, -p agent: the project is written as the caller, as before ($rc: $err)"
capture run_in "$BASE/nob" -q -p agent --net none -- sh -c 'touch g'
[ "$rc" -eq 0 ] && [ "$(stat -c %u "$BASE/nob/g")" = 65534 ]
ok $? "root, -p agent: nobody's project is written as nobody ($rc: $err)"

"$SBX" destroy --all >/dev/null 2>&1
done_testing
