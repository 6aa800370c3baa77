#!/bin/bash
# tests/integration/suite_leftovers.sh - the suite's leftover check
# (tests/lib/leftovers.sh, the last check of `make check`) counts only the
# suite's own processes, cgroups and scratch directories: a sandbox the
# user runs meanwhile, with the same binary and their own state directory,
# is not the suite's.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_base
ROOT=$TAP_ROOT
MARK_BASE=sbx-test-leftcheck-$$-$RANDOM
USER_STATE_DIRS="$BASE/user-state"
. "$TAP_ROOT/tests/lib/leftovers.sh"
# A cgroup for each (a memory limit needs one), where this machine has it.
lim=(--memory 256m)

# One of the suite's (it carries the mark) and one of the user's (no mark,
# its state in the user's own state directory).
env SBX_TEST_MARK="$MARK_BASE-x" SBX_STATE_DIR="$BASE/suite-state" \
	"$SBX" run -q --rm -n suites "${lim[@]}" -- sleep 60 >/dev/null 2>&1 &
suite_pid=$!
env -u SBX_TEST_MARK SBX_STATE_DIR="$BASE/user-state" \
	"$SBX" run -q --rm -n users "${lim[@]}" -- sleep 60 >/dev/null 2>&1 &
user_pid=$!
for _ in $(seq 100); do
	[ "$(SBX_STATE_DIR=$BASE/suite-state "$SBX" ps --json | jq length)" = 1 ] &&
		[ "$(SBX_STATE_DIR=$BASE/user-state "$SBX" ps --json | jq length)" = 1 ] && break
	sleep 0.1
done
suite_id=$(SBX_STATE_DIR=$BASE/suite-state "$SBX" ps --json | jq -r '.[0].id')
user_id=$(SBX_STATE_DIR=$BASE/user-state "$SBX" ps --json | jq -r '.[0].id')
sleep 0.3
left=$(leftovers)
grep -qxF "scratch $TAP_TMP" <<<"$left"
ok $? "a test file's scratch directory counts while it is there ($TAP_TMP)"
grep -q "^process $suite_pid: " <<<"$left"
ok $? "the suite's running sbx counts ($suite_pid)"
! grep -q "^process $user_pid: " <<<"$left"
ok $? "the user's own sbx, run meanwhile, does not ($user_pid)"
if find /sys/fs/cgroup -maxdepth 5 -type d -name "sbx-$user_id" | grep -q .; then
	grep -q "cgroup .*/sbx-$suite_id$" <<<"$left" && ! grep -q "sbx-$user_id" <<<"$left"
	ok $? "the suite's cgroup counts, the user's does not"
else
	skip "cgroups of the two" "no cgroup for a memory limit here"
fi
kill -TERM "$suite_pid" "$user_pid" 2>/dev/null
wait "$suite_pid" "$user_pid" 2>/dev/null
sleep 0.3
left=$(leftovers | grep -E "^process ($suite_pid|$user_pid):|sbx-($suite_id|$user_id)$")
[ -z "$left" ]
ok $? "nothing of theirs counts once both ended (${left:-none})"

# A test file's scratch directory is removed at its exit only once the
# purgers at work in its state directories have ended (each holds a shared
# lock on STATE/trash, as a run's purger does): one making a ready
# directory while rm -rf emptied its parent once left a scratch directory.
cat >"$BASE/child.sh" <<EOF
. "$TAP_ROOT/tests/lib/tap.sh"
mkdir -p "\$TAP_TMP/state/trash"
flock -s "\$TAP_TMP/state/trash" sleep 1 &
echo "\$! \$TAP_TMP"
for _ in \$(seq 50); do flock -n "\$TAP_TMP/state/trash" true || break; sleep 0.02; done
EOF
bash "$BASE/child.sh" >"$BASE/child.out"
read -r holder child_tmp <"$BASE/child.out"
alive=$(kill -0 "$holder" 2>/dev/null && echo yes || echo no)
[ -n "$child_tmp" ] && [ ! -e "$child_tmp" ] && [ "$alive" = no ]
ok $? "a test file's exit waits for the purger locks in its scratch directory, then removes it (holder alive after: $alive)"

done_testing
