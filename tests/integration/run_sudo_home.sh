#!/bin/bash
# tests/integration/run_sudo_home.sh - `sudo sbx run` hides the credential
# files of the user who ran sudo, not only root's.  sudo sets HOME to
# /root, so the default profile's masks (~/.npmrc, ~/.aws, ...) hid
# /root/.npmrc while the host's root, read-only in the jail, showed the
# user's own home: a world-readable ~/.npmrc with its registry token, or a
# ~/.aws/credentials in a world-readable directory, were read from the
# project's jail.  With $SUDO_UID, every ~/ mask now covers that user's
# home too; what is not masked there stays readable.  Root only (a
# throw-away user with a home under /home).
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
trap 'userdel "$NAME" 2>/dev/null; tap_cleanup "$H"' EXIT
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
done_testing
