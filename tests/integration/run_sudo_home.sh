#!/bin/bash
# tests/integration/run_sudo_home.sh - `sudo sbx run` hides the credential
# files of the user who ran sudo, not only root's.  sudo sets HOME to
# /root, so the default profile's masks (~/.npmrc, ~/.aws, ...) hid
# /root/.npmrc while the host's root, read-only in the jail, showed the
# user's own home: a world-readable ~/.npmrc with its registry token, or a
# ~/.aws/credentials in a world-readable directory, were read from the
# project's jail.  With $SUDO_UID, every ~/ mask now covers that user's
# home too; what is not masked there stays readable.
#
# And in a directory of that user's (a developer's project), the run is
# the user's, as without sudo: the command runs as the user, with the
# user's HOME, USER and LOGNAME, and the profile's ~ is the user's home
# (`sudo sbx run -p claude` used /root/.claude, read-only as root's, and
# the agent ran as root, which Claude Code refuses to do unattended).
# Root only (a throw-away user with a home under /home).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (the sudo case)"; exit 77; }
command -v useradd >/dev/null || { echo "1..0 # SKIP useradd missing"; exit 77; }
sbx_base
U=
for u in $(seq 61000 61200); do getent passwd "$u" >/dev/null || { U=$u; break; }; done
NAME=sbxsudo$$
H=/home/$NAME
useradd -M -d "$H" -s /bin/sh -u "$U" "$NAME" || { echo "1..0 # SKIP useradd failed"; exit 77; }
trap 'userdel "$NAME" 2>/dev/null; userdel "sbxbig$$" 2>/dev/null; tap_cleanup "$H"' EXIT
mkdir -p "$H/proj" "$H/.aws" && chmod 0755 "$H" "$H/.aws"
echo "//registry.npmjs.org/:_authToken=NPM-SECRET" >"$H/.npmrc"
echo "aws_secret_access_key = AWS-SECRET" >"$H/.aws/credentials"
echo "just notes" >"$H/notes.txt"
chmod 0644 "$H/.npmrc" "$H/.aws/credentials" "$H/notes.txt"
chown -R "$U:$U" "$H"

look="cat $H/.npmrc $H/.aws/credentials $H/notes.txt 2>&1; echo end"
capture env -C "$H/proj" HOME=/root SUDO_UID="$U" SUDO_USER="$NAME" SBX_STATE_DIR="$BASE/state" \
	SBX_CACHE_DIR="$BASE/cache" "$SBX" run -q -- sh -c "$look"
[ "$rc" = 0 ] && [[ "$out" != *NPM-SECRET* ]] && [[ "$out" != *AWS-SECRET* ]] &&
	[[ "$out" == *"just notes"* ]]
ok $? "sudo: the user's ~/.npmrc and ~/.aws are hidden, the rest of the home readable ($rc: $out)"

capture env -C "$H/proj" HOME=/root SUDO_UID="$U" SUDO_USER="$NAME" SBX_STATE_DIR="$BASE/state" \
	SBX_CACHE_DIR="$BASE/cache" "$SBX" run -q -p claude -- sh -c "$look"
[ "$rc" = 0 ] && [[ "$out" != *NPM-SECRET* ]] && [[ "$out" != *AWS-SECRET* ]]
ok $? "sudo: an agent's profile hides them too ($rc: $out)"

# sudo -E (HOME the user's own): the masks were already there, nothing doubled
capture env -C "$H/proj" HOME="$H" SUDO_UID="$U" SBX_STATE_DIR="$BASE/state" \
	SBX_CACHE_DIR="$BASE/cache" "$SBX" run -q --keep -n keepE -- sh -c "$look"
n=$(env SBX_STATE_DIR="$BASE/state" "$SBX" inspect --json keepE |
	jq -r '.profile.ini' | grep -c "^mask = $H/.npmrc$")
[ "$rc" = 0 ] && [[ "$out" != *NPM-SECRET* ]] && [ "$n" = 1 ]
ok $? "sudo -E: hidden, each mask once ($rc: $n)"
env SBX_STATE_DIR="$BASE/state" "$SBX" destroy --all >/dev/null 2>&1

# ---- the run is the user's ----
mkdir -p "$H/.claude" "$H/.codex"
echo '{"token":"CLAUDE-LOGIN"}' >"$H/.claude/.credentials.json"
echo '{}' >"$H/.claude.json"
printf '[user]\n\tname = Sudo Dev\n\temail = dev@example.invalid\n' >"$H/.gitconfig"
chown -R "$U:$U" "$H"
# sudo's environment: HOME, USER and LOGNAME root's, SUDO_* the user's
as_sudo() {
	local dir=$1
	shift
	env -C "$dir" HOME=/root USER=root LOGNAME=root SUDO_UID="$U" SUDO_GID="$U" \
		SUDO_USER="$NAME" SBX_STATE_DIR="$BASE/state" SBX_CACHE_DIR="$BASE/cache" "$SBX" "$@"
}
who='echo "$(id -u):$(id -g) HOME=$HOME USER=$USER LOGNAME=$LOGNAME"'

capture as_sudo "$H/proj" run -p claude --net none -- sh -c \
	"$who; cat ~/.claude/.credentials.json; echo kept >~/.claude/note; echo made >made.txt"
[ "$rc" = 0 ] && [[ "$out" == "$U:$U HOME=$H USER=$NAME LOGNAME=$NAME"* ]] &&
	[[ "$out" == *CLAUDE-LOGIN* ]] &&
	[ "$(stat -c %u:%g "$H/.claude/note" "$H/proj/made.txt" | sort -u)" = "$U:$U" ] &&
	[[ "$err" == *"user: uid $U inside, as $NAME, who ran sudo in a directory of theirs"* ]] &&
	[[ "$err" != *"root owns it"* ]] && [[ "$err" != *"/root/.claude"* ]]
ok $? "sudo -p claude in the user's project: the user's ids, home and login, written as the user ($rc: $out | $err)"

# sbx profile show says what such a run uses
capture as_sudo "$H/proj" profile show claude
[ "$rc" = 0 ] && grep -qx "bind = -$H/.claude" <<<"$out" && grep -qx "user = $U:$U" <<<"$out" &&
	grep -qx "# for $NAME, who ran sudo in a directory of theirs (-u root for root)" <<<"$out" &&
	grep -qx "set = HOME=$H" <<<"$out"
ok $? "sudo: profile show gives the user's ~/.claude and ids, as the run uses them ($rc)"

# make demo's second step, as `sudo make demo` in the user's clone runs it
# (it listed $HOME expanded on the host, /root, which the user cannot read)
capture as_sudo "$H/proj" run -q -- sh -c 'id; ls "$HOME"'
[ "$rc" = 0 ] && [[ "$out" == "uid=$U($NAME)"* ]] && [[ "$out" == *proj* ]]
ok $? "sudo: the demo's step lists the user's home as the user ($rc: $out | $err)"

# sudo drops the caller's environment: an absent API key says how to pass it
unset ANTHROPIC_API_KEY
capture as_sudo "$H/proj" run --rm -p claude --net none -- true
hint="absent (optional): ANTHROPIC_API_KEY (sudo resets the environment: sudo --preserve-env=ANTHROPIC_API_KEY sbx ... passes it)"
[ "$rc" = 0 ] && [[ "$err" == *"$hint"* ]]
ok $? "sudo -p claude without the key: the run log says how to pass it ($rc: $err)"
capture env -C "$H/proj" SBX_STATE_DIR="$BASE/state" \
	SBX_CACHE_DIR="$BASE/cache" "$SBX" run --rm -p claude --net none -- true
[ "$rc" = 0 ] && [[ "$err" == *"absent (optional): ANTHROPIC_API_KEY"* ]] &&
	[[ "$err" != *preserve-env* ]]
ok $? "without sudo the key's absence is said plainly ($rc: $err)"

capture as_sudo "$H/proj" run -q -p codex --net none -- sh -c \
	"cat ~/.claude/.credentials.json 2>&1; ls ~/.codex >/dev/null && echo codex-home"
[ "$rc" = 0 ] && [[ "$out" != *CLAUDE-LOGIN* ]] && [[ "$out" == *codex-home* ]]
ok $? "sudo -p codex: another agent's login in the user's home stays hidden ($rc: $out)"

# The copy-on-write home is the user's to write, its layer on disk or in
# memory (--rm: the in-memory upper was made owned by the jail's root)
for rm in "" --rm; do
	capture as_sudo "$H/proj" run -q $rm -p agent --net none -- sh -c \
		'stat -c %u ~ && touch ~/.cow && mkdir ~/.npm && echo wrote'
	[ "$rc" = 0 ] && [ "$out" = "$U"$'\n'wrote ] && [ ! -e "$H/.cow" ]
	ok $? "sudo -p agent ${rm:-(on disk)}: the copy-on-write home is the user's, writable, the host's untouched ($rc: $out | $err)"
done

if command -v git >/dev/null; then
	capture as_sudo "$H/proj" run -q -p agent --net none -- sh -c \
		'git init -q . && git add made.txt && git commit -qm first && git log --format=%an'
	[ "$rc" = 0 ] && [[ "$out" == "Sudo Dev" ]] &&
		[ -z "$(find "$H/proj/.git" ! -uid "$U")" ]
	ok $? "sudo -p agent: git commit as the user, with the user's ~/.gitconfig, .git the user's ($rc: $out | $err)"
else
	skip "git missing"
fi

capture as_sudo "$H/proj" run -q -d -n sudod -p agent --net none -- sleep 60
capture as_sudo "$H/proj" exec sudod -- sh -c "$who"
rec=$(as_sudo "$H/proj" inspect --json sudod | jq -r '.policy.user | "\(.uid) \(.sudo_user)"')
capture2=$(as_sudo "$H/proj" inspect sudod)
[ "$rc" = 0 ] && [[ "$out" == "$U:$U HOME=$H USER=$NAME LOGNAME=$NAME" ]] &&
	[ "$rec" = "$U $NAME" ] && [[ "$capture2" == *"uid $U gid $U as $NAME"* ]]
ok $? "sudo: sbx exec runs as the user too; the record and inspect say why ($rc: $out | $rec)"
# root's own credential files stay hidden too (the profile's ~ was the
# user's: a world-readable /root/.aws would otherwise be read)
roothome=$(getent passwd 0 | cut -d: -f6)
ini=$(as_sudo "$H/proj" inspect --json sudod | jq -r '.profile.ini')
grep -qx "mask = $roothome/.aws" <<<"$ini" && grep -qx "mask = $H/.aws" <<<"$ini"
ok $? "sudo: the masks cover root's home as well as the user's ($roothome)"
as_sudo "$H/proj" destroy sudod >/dev/null 2>&1

# Root stays root: -u root, root's own directory, an image, no real caller
capture as_sudo "$H/proj" run -q -u root -- sh -c "$who"
[ "$rc" = 0 ] && [[ "$out" == "0:0 HOME=/root USER=root"* ]]
ok $? "sudo -u root: root inside, root's home ($rc: $out)"
chmod 0755 "$BASE"
capture as_sudo "$BASE" run -q -- sh -c "$who"
[ "$rc" = 0 ] && [[ "$out" == "0:0 HOME=/root"* ]]
ok $? "sudo in a directory root owns: root inside ($rc: $out)"
# The run log says why the run is root's and not the caller's
capture as_sudo "$BASE" run --rm -- true
[ "$rc" = 0 ] && [[ "$err" == *"user: root inside, "*"; not as $NAME, who ran sudo: "* ]] &&
	[[ "$err" == *"not as $NAME, who ran sudo: $BASE is not theirs (-u $U:$U for their ids)"* ]]
ok $? "sudo in root's directory: the run log says why root ($rc: $err)"
capture as_sudo "$BASE" profile show default
[ "$rc" = 0 ] && grep -qx "# not as $NAME, who ran sudo: $BASE is not theirs (-u $U:$U for their ids)" <<<"$out"
ok $? "sudo in root's directory: profile show says why root ($rc: $out)"
capture as_sudo "$H/proj" run --rm -u root -- true
[ "$rc" = 0 ] && [[ "$err" != *"who ran sudo"* ]]
ok $? "sudo -u root: no line about the caller, root was asked for ($rc: $err)"
# the user's own directory, but where the user cannot reach it (/root)
mkdir -m 0700 "$BASE/closed" && mkdir "$BASE/closed/mine" && chown "$U:$U" "$BASE/closed/mine"
capture as_sudo "$BASE/closed/mine" run -- sh -c "$who"
[ "$rc" = 0 ] && [[ "$out" == "0:0 HOME=/root"* ]] &&
	[[ "$err" == *"not as $NAME, who ran sudo: they cannot reach $BASE/closed/mine (-u $U:$U for their ids)"* ]]
ok $? "sudo in a directory of the user's that the user cannot reach: root inside, and why ($rc: $out | $err)"
# A caller whose uid is above the jail's ids 0-65535 keeps root; the run
# log says so (it said only "root inside")
BIG=
for u in $(seq 70000 70200); do getent passwd "$u" >/dev/null || getent group "$u" >/dev/null || { BIG=$u; break; }; done
BIGNAME=sbxbig$$
if [ -n "$BIG" ] && useradd -M -d "$BASE/bighome" -s /bin/sh -u "$BIG" -U "$BIGNAME" 2>/dev/null; then
	mkdir -p "$BASE/bighome/proj" && chown -R "$BIG:$BIG" "$BASE/bighome"
	capture env -C "$BASE/bighome/proj" HOME=/root SUDO_UID="$BIG" SUDO_GID="$BIG" SUDO_USER="$BIGNAME" \
		SBX_STATE_DIR="$BASE/state" SBX_CACHE_DIR="$BASE/cache" "$SBX" run --rm -- sh -c "$who"
	userdel "$BIGNAME" 2>/dev/null
	[ "$rc" = 0 ] && [[ "$out" == "0:0 HOME=/root"* ]] &&
		[[ "$err" == *"not as $BIGNAME, who ran sudo: their uid $BIG is above the jail's ids 0-65535"* ]]
	ok $? "sudo by a user with uid $BIG: root inside, and the run log says why ($rc: $out | $err)"
else
	skip "no free uid 70000-70200 or useradd failed"
fi
sbx_rootfs "$BASE/busybox.tar.gz"
capture as_sudo "$H/proj" run -q --rootfs "$BASE/busybox.tar.gz" -- sh -c 'id -u'
[ "$rc" = 0 ] && [ "$out" = 0 ]
ok $? "sudo with an image: root inside, as image jobs need ($rc: $out)"
for bad in 0 "${U}x" "" 4294967295; do
	capture env -C "$H/proj" HOME=/root SUDO_UID="$bad" SBX_STATE_DIR="$BASE/state" \
		SBX_CACHE_DIR="$BASE/cache" "$SBX" run -q -- id -u
	[ "$rc" = 0 ] && [ "$out" = 0 ]
	ok $? "SUDO_UID='$bad' is no caller: root inside ($rc: $out)"
done
# Files sbx writes where the user named them, in a directory of the
# user's: the user's, as without sudo (root's, they could not be edited or
# overwritten there); elsewhere root's; a file that was there keeps its
# owner (only a file sbx made is given away).
capture as_sudo "$H/proj" run -q --keep -n sudox --log-json run.jsonl -- sh -c 'echo x >exported.txt'
capture as_sudo "$H/proj" export sudox -o changes.tar.gz
capture2=$(as_sudo "$H/proj" inspect --html report.html sudox 2>&1)
[ "$(stat -c %u:%g "$H/proj/run.jsonl" "$H/proj/changes.tar.gz" "$H/proj/report.html" | sort -u)" = "$U:$U" ]
ok $? "sudo: --log-json, export -o and inspect --html files in the user's project are the user's ($(stat -c '%n %u:%g' "$H/proj/run.jsonl" "$H/proj/changes.tar.gz" "$H/proj/report.html" 2>&1 | tr '\n' ' '))"
mkdir -p "$BASE/rootdir" && chmod 0755 "$BASE/rootdir"
touch "$H/proj/old.tar.gz" && chown 0:0 "$H/proj/old.tar.gz"
capture as_sudo "$H/proj" export sudox -o "$BASE/rootdir/c.tar.gz"
capture as_sudo "$H/proj" export sudox -o old.tar.gz
[ "$(stat -c %u "$BASE/rootdir/c.tar.gz")" = 0 ] && [ "$(stat -c %u "$H/proj/old.tar.gz")" = 0 ] &&
	[ -s "$H/proj/old.tar.gz" ]
ok $? "sudo: in root's directory the file is root's; a file that was there keeps its owner ($rc)"
capture env -C "$H/proj" SBX_STATE_DIR="$BASE/state" SBX_CACHE_DIR="$BASE/cache" "$SBX" export sudox -o plain.tar.gz
[ "$(stat -c %u "$H/proj/plain.tar.gz")" = 0 ]
ok $? "root without sudo: the file is root's ($rc)"

# sudo resets PATH (secure_path): a tool the user installed in their own
# bin directory (npm's prefix, ~/.local/bin) is not found; the line says
# where it is and to give its full path, which then runs.
mkdir -p "$H/.npm-global/bin" && printf '#!/bin/sh\necho mytool-ran\n' >"$H/.npm-global/bin/mytool"
chmod 0755 "$H/.npm-global/bin/mytool" && chown -R "$U:$U" "$H/.npm-global"
capture env -C "$H/proj" HOME=/root USER=root LOGNAME=root SUDO_UID="$U" SUDO_GID="$U" \
	SUDO_USER="$NAME" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	SBX_STATE_DIR="$BASE/state" SBX_CACHE_DIR="$BASE/cache" "$SBX" run -q -- mytool
[ "$rc" = 127 ] &&
	[[ "$err" == *"'mytool': not found on the jail's PATH"*"'$H/.npm-global/bin/mytool' is in a bin directory of $NAME's, on their PATH"*"sudo resets PATH"*"-- $H/.npm-global/bin/mytool"* ]]
ok $? "sudo: a tool in the user's own bin directory: where it is, and its full path ($rc: $err)"
capture as_sudo "$H/proj" run -q -- "$H/.npm-global/bin/mytool"
[ "$rc" = 0 ] && [ "$out" = mytool-ran ]
ok $? "sudo: ... which then runs ($rc: $out)"
capture env -C "$H/proj" HOME=/root USER=root LOGNAME=root SUDO_UID="$U" SUDO_GID="$U" \
	SUDO_USER="$NAME" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	SBX_STATE_DIR="$BASE/state" SBX_CACHE_DIR="$BASE/cache" "$SBX" run -q -- notatool
[ "$rc" = 127 ] && [[ "$err" == *"'notatool': not found on the jail's PATH"*"sudo resets PATH"*'"$(command -v notatool)"'* ]]
ok $? "sudo: a command found nowhere: sudo's PATH named, and how to give a full path ($rc: $err)"
env SBX_STATE_DIR="$BASE/state" "$SBX" destroy --all >/dev/null 2>&1
done_testing
