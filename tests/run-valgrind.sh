#!/bin/sh
# tests/run-valgrind.sh TEST... - run cmocka unit tests under valgrind
# memcheck; any memory error or definite/indirect leak fails the run.
set -u
# valgrind does not know the seccomp() system call, so libseccomp cannot
# compile a filter under it: test_fuzz_regress replays every harness's
# inputs but the seccomp harness's (it reports that test skipped).
export SBX_FUZZ_ONLY=${SBX_FUZZ_ONLY:-profile,proxy,capture,image}
status=0 pass=0 fail=0
mkdir -p tests/out/valgrind
for t in "$@"; do
	log=tests/out/valgrind/$(basename "$t").log
	# Tests fork children (jails, seccomp probes): follow them, but only
	# the parent's leak report counts (children _exit on purpose).
	if valgrind --quiet --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
		--trace-children=no --child-silent-after-fork=yes \
		"$t" >"$log" 2>&1; then
		echo "ok - valgrind $(basename "$t")"
		pass=$((pass + 1))
	else
		echo "not ok - valgrind $(basename "$t") (see $log)"
		grep -E '==[0-9]+==' "$log" | head -n 20
		fail=$((fail + 1))
		status=1
	fi
done
echo "$pass passed, $fail failed"
exit $status
