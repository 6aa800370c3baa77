#!/bin/bash
# tests/integration/memcheck.sh - the parsers' unit tests and the fuzz
# corpora's replay under valgrind memcheck (tests/run-valgrind.sh: any
# memory error or definite leak fails).  The profile reader works in
# inih's line buffer and the unpacker hands libarchive its buffers, both
# libraries built without sanitizers: the fuzz build cannot see a read past
# a line's end there, memcheck can (an empty first line is read while the
# buffer is still unwritten).  The seccomp harness is left out
# (tests/run-valgrind.sh says why).  `make valgrind` runs every unit test
# so.
. "$(dirname "$0")/../lib/tap.sh"
need_tools valgrind
cd "$TAP_ROOT" || exit 1

for t in test_profile test_fuzz_regress; do
	[ -x "tests/unit/$t" ] || make -s "tests/unit/$t" >/dev/null
	capture tests/run-valgrind.sh "tests/unit/$t"
	ok $rc "$t under valgrind memcheck: no memory error, no leak"
	[ $rc -eq 0 ] || printf '%s\n' "$out" | head -n 20 | sed 's/^/#   /'
done
done_testing
