# tests/lib/mntns.sh - as root, run the test file that sources it in a
# mount namespace of its own (unshare -m, private propagation), so that
# what it mounts or binds over host files is never seen by the test files
# the suite runs beside it.  Source it before tap.sh: the file is exec'd
# again, with its arguments, and only that second run goes on.
if [ "$(id -u)" -eq 0 ] && [ -z "${SBX_TEST_MNTNS:-}" ]; then
	if unshare -m --propagation private true 2>/dev/null; then
		SBX_TEST_MNTNS=1 exec unshare -m --propagation private -- bash "$0" "$@"
	fi
	echo "Bail out! cannot make a mount namespace for $0 (unshare -m)"
	exit 1
fi
