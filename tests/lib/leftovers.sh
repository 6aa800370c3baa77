# tests/lib/leftovers.sh - what `make check` must not leave behind
# (sourced by tests/run-all.sh, and by tests/integration/suite_leftovers.sh
# which checks it).  `leftovers` prints one line per process, mount or
# cgroup of the suite's own:
#   - a process of the binary under test ($SBX) whose environment carries
#     the suite's mark (SBX_TEST_MARK=$MARK_BASE...: supervisors, and the
#     jail inits they clone);
#   - a mount below one of the suite's scratch directories (sbx-test.XXXXXX,
#     sbx-escape.XXXXXX, ...) or the checkout ($ROOT);
#   - a cgroup sbx-ID that is not a sandbox of the caller's own state
#     directories ($USER_STATE_DIRS);
#   - a test file's scratch directory (tests/lib/tap.sh's TAP_TMP,
#     ${TMPDIR:-/tmp}/sbx-test.XXXXXX), which its exit removes.
# A sandbox the user runs meanwhile, with their own state, is none of these.
leftovers() {
	local exe id d s mine p
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[ "$exe" = "$SBX" ] && [ "${p#/proc/}" != $$ ] || continue
		{ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -q "^SBX_TEST_MARK=$MARK_BASE" || continue
		echo "process ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-100)"
	done
	awk -v root="$ROOT/" '$5 ~ /\/sbx-[a-z]+\.[A-Za-z0-9]+(\/|$)/ || index($5, root) == 1 {print "mount " $5}' \
		/proc/self/mountinfo
	for d in "${TMPDIR:-/tmp}"/sbx-test.*; do
		[ -d "$d" ] && echo "scratch $d"
	done
	find /sys/fs/cgroup -maxdepth 5 -type d -name 'sbx-*' 2>/dev/null | while read -r d; do
		id=${d##*/sbx-}
		mine=
		for s in $USER_STATE_DIRS; do [ -d "$s/sandboxes/$id" ] && mine=1; done
		[ -z "$mine" ] && echo "cgroup $d"
	done
}
