#!/bin/bash
# tests/integration/run_unlisted_user.sh - sbx run by, for or on behalf of a
# user id that /etc/passwd does not list: a CI container's arbitrary uid
# (`docker run -u 4321`, OpenShift), a file owner from an unpacked
# tarball, a sudo caller known only to a directory service.  The static
# sbx (-static-pie) crashed with SIGSEGV on each (its user lookups loaded
# glibc's NSS modules, here libnss_systemd, the "systemd" of nsswitch.conf's
# passwd line, into a static binary); now such a lookup reads /etc/passwd and
# /etc/group alone and an unlisted id is a number.  As root (setpriv for
# the unlisted user).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (setpriv to an unlisted uid)"; exit 77; }
sbx_base
U=
for u in $(seq 4321 4400); do
	getent passwd "$u" >/dev/null || getent group "$u" >/dev/null || { U=$u; break; }
done
[ -n "$U" ] || { echo "1..0 # SKIP no unlisted uid in 4321-4400"; exit 77; }
W=$BASE/w-$U
mkdir -p "$W/proj" && chown -R "$U:$U" "$W" && chmod 0755 "$W"
as_u() { # as_u CMD...: as the unlisted user, in its project
	(cd "$W/proj" && setpriv --reuid="$U" --regid="$U" --clear-groups --inh-caps=-all -- \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$W" "$@")
}

capture as_u "$SBX" run -q --rm -- id -u
[ "$rc" = 0 ] && [ "$out" = "$U" ]
ok $? "uid $U (unlisted): sbx run -- id -u ($rc: $out $err)"

capture as_u "$SBX" run -q --rm -p agent -- sh -c 'echo made >file; cat file'
[ "$rc" = 0 ] && [ "$out" = made ] && [ -f "$W/proj/file" ]
ok $? "uid $U: -p agent writes its project ($rc: $out $err)"

# $USER in a profile: the user's name, or its number when it has none
cat >"$W/u.ini" <<'EOF'
[sandbox]
extends = default
[env]
set = WHO=$USER
EOF
chmod 0644 "$W/u.ini"
capture as_u "$SBX" run -q --rm -p "$W/u.ini" -- sh -c 'echo "$WHO"'
[ "$rc" = 0 ] && [ "$out" = "$U" ]
ok $? "uid $U: \$USER in a profile is $U ($rc: $out $err)"

# kept, then inspected, diffed and exported (export names owners)
capture as_u env SBX_STATE_DIR="$W/state" "$SBX" run -q --keep -n k -- sh -c 'echo x >new'
r1=$rc
capture as_u env SBX_STATE_DIR="$W/state" "$SBX" diff --stat k
r2=$rc
capture as_u env SBX_STATE_DIR="$W/state" "$SBX" export k -o "$W/k.tar"
r3=$rc
[ "$r1" = 0 ] && [ "$r2" = 0 ] && [ "$r3" = 0 ] && tar tf "$W/k.tar" | grep -q 'new$'
ok $? "uid $U: a kept run's diff and export ($r1 $r2 $r3: $err)"
capture as_u env SBX_STATE_DIR="$W/state" "$SBX" apply k
[ "$rc" = 0 ] && [ "$(cat "$W/proj/new" 2>/dev/null)" = x ]
ok $? "uid $U: sbx apply writes the change ($rc: $err)"
as_u env SBX_STATE_DIR="$W/state" "$SBX" destroy --all >/dev/null 2>&1

# Root, on the unlisted user's behalf: sudo's SUDO_UID, in its directory
capture env -C "$W/proj" HOME=/root SUDO_UID="$U" SUDO_GID="$U" SBX_STATE_DIR="$BASE/state" \
	SBX_CACHE_DIR="$BASE/cache" "$SBX" run -q --rm -- true
[ "$rc" = 0 ]
ok $? "root with SUDO_UID=$U (unlisted) in its directory ($rc: $err)"

# Root binding a directory the unlisted user owns with group root: the
# owner's own group is looked up (the root group is never mapped); it has
# none here, so the bind is read-only, as for root's own
mkdir -p "$BASE/grp0" && chown "$U:0" "$BASE/grp0"
capture env -C "$BASE" SBX_STATE_DIR="$BASE/state" SBX_CACHE_DIR="$BASE/cache" \
	"$SBX" run --rm --bind "$BASE/grp0:/mnt" -- true
[ "$rc" = 0 ] && grep -q "^sbx: warning: bind '$BASE/grp0' is read-only in the jail" <<<"$err"
ok $? "root: --bind of a directory uid $U owns, group root: read-only ($rc: $(grep warning <<<"$err"))"

done_testing
