#!/bin/bash
# tests/integration/bench_compare.sh - bench/compare.py, which every ratio of
# `make bench` goes through: the ratios it prints are the medians' and
# each is for the pair it names (--vs, --pair), with the target's verdict;
# a bad pair is refused.  Commands are sleeps of known length, long
# enough that what a loaded machine adds to each run (tens of ms: a run
# of 60 against 30 ms once measured 1.50) keeps the ratios inside the
# bounds the checks use.
. "$(dirname "$0")/../lib/tap.sh"
need_tools python3

cmp() { python3 "$TAP_ROOT/bench/compare.py" --runs 3 --label t "$@"; }

capture cmp --vs b --target 'a=<=:1.0' --pair a/c --target 'a/c=>=:1.5' \
	"a=sleep 0.5" "b=sleep 0.1" "c=sleep 0.2"
ok $rc "compare.py --vs with --pair runs (exit $rc: $err)"
r=$(awk -F'\t' '$1 == "RESULT" && $3 == "a/b" {print $4 " " $6}' <<<"$out")
awk -v r="${r% *}" 'BEGIN {exit !(r > 2.0 && r < 5.5)}'
ok $? "--vs b: a/b is about 5 (500 ms over 100 ms): '$r'"
[ "${r#* }" = MISSED ]
ok $? "--vs b: a's target <= 1.0 is MISSED: '$r'"
r=$(awk -F'\t' '$1 == "RESULT" && $3 == "a/c" {print $4 " " $6}' <<<"$out")
awk -v r="${r% *}" 'BEGIN {exit !(r > 1.7 && r < 2.6)}'
ok $? "--pair a/c: about 2.5 (500 ms over 200 ms) from the same runs: '$r'"
[ "${r#* }" = ok ]
ok $? "--pair a/c: its own target (a/c=>=:1.5) is ok: '$r'"
! grep -q $'^RESULT\tt\tc/b' <<<"$out"
ok $? "--pair's peer c gets no --vs ratio of its own"
[ "$(grep -c '^RESULT' <<<"$out")" = 2 ]
ok $? "two ratios in all (a/b, a/c)"

capture cmp --pair a/x "a=true" "b=true"
[ "$rc" != 0 ] && grep -q "bad --pair 'a/x'" <<<"$err"
ok $? "--pair with a name that is not a command: refused ($rc: $err)"

done_testing
