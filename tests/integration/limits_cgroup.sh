#!/bin/bash
# tests/integration/limits_cgroup.sh - resource limits through the real
# binary: which limit is enforced how (run log and record), each limit
# firing under cgroups (memory -> OOM 137, pids, cpus), no cgroup left
# behind, a lost run's cgroup removed by `destroy --stale`, and the rlimit
# fallback (SBX_CGROUP=none, and as an unprivileged user without
# delegation).  TAP-ish output; exit 0 only if all passed.
set -u
cd "$(dirname "$0")/../.." || exit 1
SBX=$(realpath "${SBX:-./sbx}")
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else notok "$d"; fi
}

base=$(mktemp -d)
chmod 0777 "$base"
cleanup() {
	# Anything still in one of our cgroups is ours: kill it by pid.
	for id in $(ls "$base/state/sandboxes" 2>/dev/null); do
		for d in $(find /sys/fs/cgroup -type d -name "sbx-$id" 2>/dev/null); do
			for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		done
	done
	SBX_STATE_DIR=$base/state "$SBX" destroy --all >/dev/null 2>&1
	rm -rf "$base"
}
trap cleanup EXIT
export SBX_STATE_DIR=$base/state SBX_CACHE_DIR=$base/cache

# Python makes a clean memory hog and reads the JSON record.
if ! command -v python3 >/dev/null; then
	echo "ok 1 - limits # SKIP python3 missing"
	exit 0
fi
# rec NAME EXPR: evaluate EXPR on the record r of the sandbox named NAME.
rec() {
	python3 - "$SBX_STATE_DIR" "$1" "$2" <<'EOF'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/sandboxes/*/record.json"):
    r = json.load(open(f))
    if r.get("name") == sys.argv[2]:
        print(eval(sys.argv[3]))
EOF
}
hog='b = bytearray(256 << 20); print("survived")'

# ---- which flavour is this? ----
"$SBX" run --rm --memory 32m --pids 16 --cpus 0.5 -- true 2>"$base/probe.err"
limits=$(grep '^sbx: limits:' "$base/probe.err")
check "run log names the enforcement of every limit" \
	grep -q 'memory 32M (.*), pids 16 (.*), cpus 0.5 (.*), core 0 (rlimit)' "$base/probe.err"
cg=0
case $limits in *"memory 32M (cgroup v"*) cg=1 ;; esac
why=$(sed -n 's/^sbx: warning: //p' "$base/probe.err" | head -1 | sed 's/; memory falls back.*//')

# ---- cgroup enforcement ----
if [ $cg = 1 ]; then
	"$SBX" run --rm --memory 32m -- python3 -c "$hog" >"$base/out" 2>"$base/err"
	st=$?
	check "memory hog is OOM-killed: exit 137 (got $st)" [ $st = 137 ]
	check "the footer reports the OOM kill" grep -qi 'oom' "$base/err"
	check "the hog did not survive" bash -c "! grep -q survived '$base/out'"

	"$SBX" run --rm --pids 16 -- sh -c \
		'i=0; while [ $i -lt 60 ]; do sleep 5 & i=$((i+1)); echo "forked $i"; done' \
		>"$base/out" 2>&1
	last=$(grep -c '^forked' "$base/out")
	check "fork bomb stopped by pids 16 ($last forks)" [ "$last" -ge 1 -a "$last" -le 15 ]
	check "the refused fork is visible to the command" grep -q 'fork' "$base/err" "$base/out"

	# Two busy loops for a second: unlimited they could take 2 cpus; under
	# cpus 0.5 the cpu time must stay near half the wall time.  (Load on
	# the machine can only lower it, so this bound does not flake.)
	"$SBX" run -q --rm --pids 100000000 --memory 64T --cpus 999.5 -- true
	st=$?
	check "limits beyond what the kernel takes still run (exit $st)" [ $st = 0 ]

	spin='timeout 1 sh -c "while :; do :; done" & timeout 1 sh -c "while :; do :; done"; wait'
	"$SBX" run -q --keep --name spin-half --cpus 0.5 -- sh -c "$spin"
	ratio=$(rec spin-half "round(r['resources']['cpu_ms'] / r['resources']['wall_ms'], 2)")
	check "cpus 0.5 holds two busy loops to cpu/wall $ratio <= 0.65" \
		python3 -c "import sys; sys.exit(not (float('$ratio') <= 0.65))"
	enf=$(rec spin-half "r['policy']['limits']['cpus']['enforced']")
	check "record: policy.limits.cpus enforced by a cgroup ($enf)" \
		[ "$enf" = cgroup1 -o "$enf" = cgroup2 ]
	paths=$(rec spin-half "' '.join(r['cgroup']['paths'])")
	check "record lists the sandbox's cgroup paths" [ -n "$paths" ]
	left=0
	for p in $paths; do [ -e "$p" ] && left=1; done
	check "no cgroup directory is left after the run" [ $left = 0 ]

	# A lost run: the supervisor is SIGKILLed mid-command.
	"$SBX" run -q --keep --name lost --memory 64m -- sleep 60 &
	sup=$!
	id=
	for _ in $(seq 50); do
		id=$(rec lost "r['id']")
		[ -n "$id" ] && break
		sleep 0.1
	done
	sleep 0.5
	dirs=$(find /sys/fs/cgroup -type d -name "sbx-$id" 2>/dev/null)
	check "the running sandbox has its cgroups" [ -n "$dirs" ]
	kill -9 "$sup"
	wait "$sup" 2>/dev/null
	alive=1
	for _ in $(seq 30); do
		alive=0
		for d in $dirs; do [ -n "$(cat "$d/cgroup.procs" 2>/dev/null)" ] && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	check "the jail dies with its supervisor (nothing left in its cgroup)" [ $alive = 0 ]
	# Whatever the jail left, kill it by pid so the run is really lost.
	for d in $dirs; do for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; done
	sleep 0.3
	"$SBX" destroy --stale >"$base/out" 2>&1
	left=0
	for d in $dirs; do [ -e "$d" ] && left=1; done
	check "destroy --stale removes the lost run's cgroups" [ $left = 0 ]
else
	for t in "memory hog OOM-killed" "pids" "cpus" "no cgroup left" "lost run"; do
		skip "cgroup: $t" "no usable cgroup here: $why"
	done
fi

# ---- the cgroup v2 code path, on a fake hierarchy (SBX_CGROUP_ROOT) ----
# This machine has no v2 controllers; a modern one is v2-only.  A fake
# tree shaped like systemd's (the user's scope holds a process, app.slice
# none) shows what sbx writes there, run after run, as root and as a user.
fakev2() { # fakev2 PREFIX WHO
	local pfx=$1 who=$2 t
	t=$(mktemp -d "$base/v2.XXXXXX")
	mkcg() { mkdir -p "$1"; echo "cpuset cpu io memory pids" >"$1/cgroup.controllers"
		echo "$2" >"$1/cgroup.subtree_control"; echo "$3" >"$1/cgroup.procs"
		[ "$4" = root ] || echo domain >"$1/cgroup.type"; }
	mkcg "$t" "cpu memory pids" 1 root
	mkcg "$t/user.slice" "cpu memory pids" "" x
	mkcg "$t/user.slice/app.slice" "" "" x
	mkcg "$t/user.slice/app.slice/term.scope" "" 4242 x
	echo "0::/user.slice/app.slice/term.scope" >"$t/self"
	chmod -R a+rwX "$t"
	SBX_CGROUP_ROOT=$t SBX_CGROUP_SELF=$t/self SBX_STATE_DIR=$t/state SBX_CACHE_DIR=$t/cache \
		$pfx "$SBX" run --keep --name v2 --memory 32m --pids 64 --cpus 1.5 -- true 2>"$t/err"
	check "$who: v2: run log says memory 32M (cgroup v2, swap off, OOM kills the whole jail)" \
		grep -q 'memory 32M (cgroup v2, swap off, OOM kills the whole jail), pids 64 (cgroup v2), cpus 1.5 (cgroup v2 cpu.max)' "$t/err"
	check "$who: v2: controllers enabled in the process-free parent, not the user's scope" \
		bash -c "grep -qx '+memory +pids +cpu' '$t/user.slice/app.slice/cgroup.subtree_control' &&
			[ -z \"\$(cat '$t/user.slice/app.slice/term.scope/cgroup.subtree_control')\" ]"
	local rec
	rec=$(ls "$t"/state/sandboxes/*/record.json 2>/dev/null | head -1)
	local id
	id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['id'])" "$rec" 2>/dev/null)
	check "$who: v2: record names the cgroup beside the scope" \
		python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cgroup']; sys.exit(not (c['version'] == 2 and c['paths'] == [sys.argv[2]]))" \
		"$rec" "$t/user.slice/app.slice/sbx-$id"
	check "$who: v2: the run's cgroup is removed afterwards" [ -n "$id" -a ! -e "$t/user.slice/app.slice/sbx-$id" ]
}
fakev2 "" "$(id -un)"
if [ "$(id -u)" = 0 ]; then
	fakev2 "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --" "nobody"
fi

# ---- rlimit fallback ----
fallback() { # run as the current user, or as nobody: $1 = prefix command
	local pfx=$1 who=$2 out
	out=$(mktemp -d "$base/fb.XXXXXX")
	chmod 0777 "$out"
	touch "$out/out" "$out/err"
	chmod 0666 "$out/out" "$out/err"
	# Its own state: the user may not write the one root made.
	local -x SBX_STATE_DIR=$out/state SBX_CACHE_DIR=$out/cache
	$pfx "$SBX" run --rm --memory 64m --pids 16 --cpus 1 -- python3 -c "$hog" \
		>"$out/out" 2>"$out/err"
	st=$?
	check "$who: memory hog fails under RLIMIT_AS (exit $st, no OOM kill)" \
		[ $st != 0 -a $st != 137 ]
	check "$who: run log says memory falls back to RLIMIT_AS" \
		grep -q 'memory 64M (rlimit AS' "$out/err"
	check "$who: run log says pids fall back to RLIMIT_NPROC and cpus are not enforced" \
		grep -q 'pids 16 (rlimit NPROC.*cpus 1 (not enforced' "$out/err"
	check "$who: the warning explains why there is no cgroup" grep -q '^sbx: warning: .*' "$out/err"
	# Other processes of the same uid outside do not count (userns ucounts).
	$pfx bash -c 'for i in $(seq 20); do sleep 30 & done
		"$0" run --rm --pids 16 -- sh -c "i=0; while [ \$i -lt 60 ]; do sleep 5 & i=\$((i+1)); echo forked \$i; done" >"$1" 2>&1
		kill $(jobs -p)' "$SBX" "$out/out"
	last=$(grep -c '^forked' "$out/out")
	check "$who: fork bomb stopped by RLIMIT_NPROC 16 ($last forks, 20 of its uid outside)" \
		[ "$last" -ge 10 -a "$last" -le 15 ]
}
export SBX_CGROUP=none
fallback "" "SBX_CGROUP=none"
unset SBX_CGROUP
if [ "$(id -u)" = 0 ]; then
	fallback "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --" "nobody"
fi

echo "$n tests, fail=$fail"
exit $fail
