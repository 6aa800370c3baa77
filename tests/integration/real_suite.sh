#!/bin/bash
# sbx-test-timeout: 900
# sbx-test-lane: long
# tests/integration/real_suite.sh - a real test suite inside sbx: some of
# CPython's own regression modules (Debian's libpython3.11-testsuite) that
# use loopback servers, subprocesses, signals and ptys must pass under the
# default profile as they do on the host (the jail's own lo is up, netlink
# route sockets and ptys work, nothing outside is reachable).  As root and
# as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c 'import test.support, test.test_pty' 2>/dev/null; then
	echo "1..0 # SKIP CPython's test suite is not installed (Debian: libpython3.11-testsuite, which make deps installs)"
	exit 77
fi
sbx_modes
sbx_base
sbx_wd
MODULES="test_pty test_httpservers test_asyncio.test_events test_select test_selectors test_syslog test_subprocess test_socketserver"

# The modules mostly wait (timeouts, child processes, sleeps): each mode
# runs them in parallel workers (-j), and the modes run at the same time,
# each in a sandbox of its own.  One run takes as long as test_subprocess.
declare -A pid
for mode in $MODES; do
	sbx_as_mode_in "$WD" $mode timeout 600 "$SBX" run -q --rm --net none -- \
		"$PY" -m test -j4 $MODULES >"$TAP_TMP/py.$mode" 2>&1 &
	pid[$mode]=$!
done
for mode in $MODES; do
	wait "${pid[$mode]}"
	rc=$?
	out=$(cat "$TAP_TMP/py.$mode")
	res=$(grep -E '^Tests result: ' <<<"$out" | tail -n 1)
	[ "$rc" -eq 0 ] && [ "$res" = "Tests result: SUCCESS" ]
	r=$?
	ok $r "$mode: CPython's $MODULES pass inside sbx ($rc: $res)"
	if [ $r -ne 0 ]; then
		grep -E '^(FAIL|ERROR):|failed:|^    test_' <<<"$out" | head -n 20 | sed 's/^/# /'
		capture sbx_as_mode_in "$WD" $mode timeout 600 "$PY" -m test -j4 $MODULES
		diag "the same on the host: $(grep -E '^Tests result: ' <<<"$out" | tail -n 1)"
	fi
done
done_testing
