#!/bin/sh
# tests/demo.sh - what `make demo` shows: a real sandbox from a busybox
# rootfs tarball (made from Debian's busybox-static), then the host root
# under the built-in default profile, exit statuses passing through, and,
# when run as root, the same sandbox as an unprivileged user.
#
# State and image cache go to tests/out/demo/ (set SBX_STATE_DIR and
# SBX_CACHE_DIR to use others), so the demo leaves the system alone.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
SBX=${SBX:-$ROOT/sbx}
OUT=$ROOT/tests/out
TARBALL=$OUT/busybox.tar.gz
export SBX_STATE_DIR="${SBX_STATE_DIR:-$OUT/demo/state}"
export SBX_CACHE_DIR="${SBX_CACHE_DIR:-$OUT/demo/cache}"
failed=0

step() {
	printf '\n\033[1m$ %s\033[0m\n' "$*" | { [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && cat || sed 's/\x1b\[[0-9;]*m//g'; }
}
# expect STATUS CMD...: run it, show its status, remember a mismatch.
expect() {
	want=$1
	shift
	"$@"
	got=$?
	echo "[exit status $got]"
	if [ "$got" != "$want" ]; then
		echo "demo: expected exit status $want, got $got" >&2
		failed=1
	fi
}

[ -x "$SBX" ] || { echo "demo: $SBX is not built (run make)" >&2; exit 1; }
mkdir -p "$OUT"
if [ ! -s "$TARBALL" ] || [ tests/lib/mkrootfs.sh -nt "$TARBALL" ]; then
	step "tests/lib/mkrootfs.sh $TARBALL"
	tests/lib/mkrootfs.sh "$TARBALL" || exit 1
fi
echo "rootfs: $TARBALL ($(du -k "$TARBALL" | cut -f1) KiB); state in $SBX_STATE_DIR"

# 1. A busybox jail with the built-in defaults: who am I, where am I, who
# is pid 1, what is /.
step "sbx run --rootfs $TARBALL -- sh -c 'id; hostname; tr \"\\0\" \" \" </proc/1/cmdline; echo; ls /'"
expect 0 "$SBX" run --rootfs "$TARBALL" -- sh -c 'id; hostname; tr "\\0" " " </proc/1/cmdline; echo; ls /'

# 2. The host's root, read-only, with the working directory copy-on-write:
# who the command is and its home (under sudo, in a directory of the user
# who ran it, that user and that user's home: $HOME is expanded inside).
step "sbx run -- sh -c 'id; ls \"\$HOME\"'"
expect 0 "$SBX" run -- sh -c 'id; ls "$HOME"'

# 3. Exit statuses pass through; a command that is not there is 127.
step "sbx run -q --rm --rootfs $TARBALL -- sh -c 'exit 3'"
expect 3 "$SBX" run -q --rm --rootfs "$TARBALL" -- sh -c 'exit 3'
step "sbx run -q --rm --rootfs $TARBALL -- no-such-command"
expect 127 "$SBX" run -q --rm --rootfs "$TARBALL" -- no-such-command

# 4. The same sandbox as nobody (unprivileged user namespaces).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	tmp=$(mktemp -d /tmp/sbx-demo.XXXXXX)
	chmod 0777 "$tmp"
	# Copies nobody can reach: the checkout may not be (a clone in /root).
	cp "$SBX" "$tmp/sbx" && cp "$TARBALL" "$tmp/busybox.tar.gz" &&
		chmod 0755 "$tmp/sbx" && chmod 0644 "$tmp/busybox.tar.gz"
	step "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- sbx run --rootfs busybox.tar.gz -- sh -c 'id; cat /proc/self/uid_map'"
	# ... from a directory of its own (the default profile brings the
	# working directory in, and nobody may not be able to open this one).
	(cd "$tmp" && expect 0 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
		env HOME="$tmp" SBX_STATE_DIR="$tmp/state" SBX_CACHE_DIR="$tmp/cache" \
		"$tmp/sbx" run --rootfs "$tmp/busybox.tar.gz" -- sh -c 'id; cat /proc/self/uid_map'
	 [ "$failed" = 0 ]) || failed=1
	rm -rf "$tmp"
fi

# 5. What is left: sandboxes kept by their persist policy, then removed.
step "sbx ps -a"
"$SBX" ps -a
if [ "$SBX_STATE_DIR" = "$OUT/demo/state" ]; then
	step "sbx destroy --all"
	"$SBX" destroy --all
fi

echo
if [ "$failed" = 0 ]; then
	echo "demo: all steps behaved as expected"
else
	echo "demo: some steps did not behave as expected (see above)" >&2
fi
exit "$failed"
