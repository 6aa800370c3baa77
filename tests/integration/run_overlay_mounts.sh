#!/bin/bash
# tests/integration/run_overlay_mounts.sh - copy-on-write overlays of host
# directories that hold mount points.  As an ordinary user the kernel
# refuses such a lower layer (its mounts are locked: an overlay would show
# what they cover): an optional overlay (the default profile's
# `overlay = -$HOME`, the working directory's `overlay = $PWD`) cannot be made:
# the directory is bound read-only as it is (its mounts included) and the
# run log warns that it is not copy-on-write.  As root (idmapped lowers)
# both are copy-on-write.
. "$(dirname "$0")/../lib/tap.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (mounts a tmpfs under the test's home directory)"
	exit 77
fi
# Not under /tmp or /var/tmp: the default profile gives the jail its own.
mkdir -p /srv
B=$(mktemp -d /srv/sbx-ovl.XXXXXX)
mkdir -p "$B/home/mnt" "$B/work" "$B/state" "$B/cache"
chmod -R 0777 "$B"
cp "$SBX" "$B/sbx" && chmod 0755 "$B/sbx"
mount -t tmpfs -o size=1m none "$B/home/mnt" || { echo "1..0 # SKIP cannot mount a tmpfs"; exit 77; }
trap 'umount "$B/home/mnt" 2>/dev/null; tap_cleanup "$B"' EXIT
echo in-the-mount >"$B/home/mnt/file"

as_nobody() {
	(cd "$1" && shift && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$B/home" \
		SBX_STATE_DIR="$B/state" SBX_CACHE_DIR="$B/cache" "$@")
}

# The home and the working directory hold mount points: both read-only,
# with their mounts, and a warning each; the run goes on.
echo in-the-vol >"$B/home/mnt/vol" 2>/dev/null
capture as_nobody "$B/home" "$B/sbx" run -- sh -c 'cat "$HOME/mnt/file"; touch "$HOME/x" 2>/dev/null && echo writable || echo read-only'
[ $rc -eq 0 ] && [[ $out == *in-the-mount*read-only* ]] &&
	[[ $err == *"warning: '$B/home' is read-only, not copy-on-write"* ]]
ok $? "user: an overlay over mount points is a read-only bind with a warning (rc $rc, $out, $err)"
[ ! -e "$B/home/x" ]
ok $? "user: the host home is unchanged"
capture as_nobody "$B/work" "$B/sbx" run -q -- true
[ $rc -eq 0 ] && [ -z "$err" ]
ok $? "user: from a directory without mounts, nothing to warn about (rc $rc, $err)"

# As root the same directories are copy-on-write (idmapped lower layers);
# like any overlay, the view is of the directory itself, not of the mounts
# inside it.
capture sh -c "cd '$B/home' && HOME='$B/home' SBX_STATE_DIR='$B/state-root' SBX_CACHE_DIR='$B/cache-root' '$B/sbx' run -q -- sh -c 'touch \"\$HOME/y\" && echo ok'"
[ $rc -eq 0 ] && [ "$out" = ok ] && [ ! -e "$B/home/y" ]
ok $? "root: the same home is copy-on-write and the host unchanged (rc $rc, $err)"

# A working directory inside the home: one overlay shows both (the home's)
# when that one is copy-on-write...  (Only the overlays under $B count: the
# jail's root is the host's, where another test file may have one mounted.)
mkdir -p "$B/home/proj" && chmod 0777 "$B/home/proj"
capture sh -c "cd '$B/home/proj' && HOME='$B/home' SBX_STATE_DIR='$B/state-root' SBX_CACHE_DIR='$B/cache-root' '$B/sbx' run --keep -n nested -- sh -c 'touch \"\$PWD/made\" && grep \" - overlay \" /proc/self/mountinfo | cut -d\" \" -f5 | grep -c \"^$B/\"; grep \" - overlay \" /proc/self/mountinfo | cut -d\" \" -f5 | grep \"^$B/\"'"
set -- $out
[ $rc -eq 0 ] && [ "$1" = 1 ] && [ "$2" = "$B/home" ] && [ ! -e "$B/home/proj/made" ]
ok $? "root: a working directory inside the home is the home's overlay, not one of its own ($(echo $out), rc $rc)"
capture env SBX_STATE_DIR="$B/state-root" SBX_CACHE_DIR="$B/cache-root" "$B/sbx" inspect --changes nested
[[ $out == *"A $B/home/proj/made"* ]]
ok $? "root: ... and what the command wrote there is in the sandbox's change set ($(echo $out))"
# ... but not when the home cannot be (it holds a mount point and sbx is
# unprivileged): the working directory's own overlay keeps it copy-on-write.
capture as_nobody "$B/home/proj" "$B/sbx" run -- sh -c 'touch "$PWD/made2" && echo wrote'
[ $rc -eq 0 ] && [ "$out" = wrote ] && [ ! -e "$B/home/proj/made2" ] &&
	[[ $err == *"warning: '$B/home' is read-only"* ]]
ok $? "user: a home over mount points is read-only, the working directory in it still copy-on-write (rc $rc, $out, $err)"

done_testing
