# tests/lib/tap.sh - TAP-ish helpers for tests/integration/*.sh (bash).
#
#   . "$(dirname "$0")/../lib/tap.sh"
#   ok COND_STATUS "description"     (0 = pass: `ok $? "desc"` after a test)
#   check "description" CMD...       runs CMD, passes when it exits 0
#   skip "description" "reason"
#   capture CMD...                   runs CMD; sets $out, $err, $rc
#   need_tools TOOL...               the whole file is skipped (exit 77)
#                                    unless every TOOL is in PATH
#   done_testing                     exits 0 only when nothing failed
#
# SBX is the binary under test (default ./sbx from the repo root).
# TAP_TMP is a private temporary directory, removed at exit.

TAP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SBX=${SBX:-$TAP_ROOT/sbx}
case "$SBX" in /*) ;; *) SBX=$PWD/$SBX ;; esac
TAP_N=0
TAP_FAILED=0
TAP_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sbx-test.XXXXXX")
chmod 0755 "$TAP_TMP"
# At exit: first wait for the purgers of this file's runs still at work in
# its state directories (each holds a shared lock on STATE/trash until it
# ends, lib/state/trash.c, as `sbx destroy --stale` waits for them): one
# making a ready directory while rm -rf empties its parent made that fail.
# tap_cleanup [PATH...]: the same, then PATHs removed too.
tap_cleanup() {
	local t
	while IFS= read -r -d '' t; do
		timeout 60 flock -x "$t" true 2>/dev/null
	done < <(find "$TAP_TMP" -xdev -type d -name trash -print0 2>/dev/null)
	rm -rf "$TAP_TMP" "$@"
}
trap tap_cleanup EXIT

ok() {
	TAP_N=$((TAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_N - $2"
	else
		echo "not ok $TAP_N - $2"
		TAP_FAILED=$((TAP_FAILED + 1))
	fi
}

check() {
	local desc=$1
	shift
	"$@"
	ok $? "$desc"
}

skip() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP $2"
}

# diag TEXT...: a comment line (shown in the log, not counted).
diag() {
	printf '# %s\n' "$*"
}

need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || {
			echo "1..0 # SKIP needs $t (tests/deps.sh)"
			exit 77
		}
	done
}

capture() {
	"$@" >"$TAP_TMP/.out" 2>"$TAP_TMP/.err"
	rc=$?
	out=$(cat "$TAP_TMP/.out")
	err=$(cat "$TAP_TMP/.err")
}

# lines TEXT: number of lines in TEXT (0 for empty).
lines() {
	if [ -z "$1" ]; then echo 0; else printf '%s\n' "$1" | wc -l; fi
}

done_testing() {
	echo "1..$TAP_N"
	[ "$TAP_FAILED" -eq 0 ]
	exit $?
}
