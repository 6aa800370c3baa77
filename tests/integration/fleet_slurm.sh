#!/bin/bash
# sbx-test-lane: wait (a one-minute Slurm time limit, and KillWait)
# sbx-test-timeout: 600
# tests/integration/fleet_slurm.sh - sbx as the job step of a batch engine:
# a one-node Slurm cluster (munged, slurmctld, slurmd from Debian's
# slurm-wlm and munge, configured in a scratch directory, on loopback in a
# network namespace of their own, stopped at the end) runs the README's
# sbatch script (its paths moved into the scratch directory) as two array
# jobs at once, each task one `sbx run -p ci --name job-N --log-json FILE
# -- ./run-task N` on a busybox tarball, one cold image cache per user:
#
#   task  1-10 succeed, 11-14 fail (exit N), 15-17 run into the job's time
#         limit (17 ignores SIGTERM: sbx's stop timeout kills its jail
#         before Slurm's KillWait), 18-20 are cancelled with scancel (19
#         ignores SIGTERM; 20 ignores it and gets SIGTERM and then SIGKILL
#         before the stop timeout is up, so the SIGKILL reaches sbx);
#   root runs all 20, nobody (sbatch --uid) tasks 1, 2, 11, 15, 19 and 20.
#
# Then: every task's end reached Slurm (its job completion records: state
# and exit code), every task's run log parses and says how it ended, the
# failed sandboxes were kept and their records collected (sbx inspect
# --json of many, --summary), nothing of a timed-out or cancelled task is
# left (no process, no mount, no cgroup; the SIGKILLed supervisor's empty
# cgroups are swept by the node's next run), the tasks shared one
# published image, and the README's jq report of the run logs agrees.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root: slurmd runs each task as its submitter"
	exit 77
fi
missing=
for c in munged munge slurmctld slurmd sbatch squeue scancel scontrol; do
	command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
if [ -n "$missing" ]; then
	echo "1..0 # SKIP Slurm is not installed (no$missing): apt-get install slurmctld slurmd slurm-client munge (tests/deps.sh --install does)"
	exit 77
fi
# The daemons listen on every address they have: the whole test runs in a
# network namespace of its own, with lo and an unconnected tun device (a
# 10.254.0.1/32 on it, no route out: glibc's AI_ADDRCONFIG, which Slurm
# asks for, counts no loopback address, and finds no address family
# without one).  Nothing outside the namespace can reach the daemons.
if [ -z "${SBX_FLEET_NETNS:-}" ]; then
	if unshare --net true 2>/dev/null; then
		# the run in the namespace makes its own TAP_TMP: exec ends this
		# one's shell, and its EXIT trap with it
		tap_cleanup
		SBX_FLEET_NETNS=1 exec unshare --net -- bash "$0" "$@"
	fi
	echo "Bail out! cannot make a network namespace for the cluster (unshare --net)"
	exit 1
fi
ip link set lo up && ip tuntap add mode tun name sbxfleet0 &&
	ip addr add 10.254.0.1/32 dev sbxfleet0 && ip link set sbxfleet0 up ||
	{ echo "Bail out! cannot set up the cluster's network namespace (lo, a tun device)"; exit 1; }

sbx_base
sbx_wd
IMG=$BASE/busybox.tar.gz
sbx_rootfs "$IMG"
NENTRIES=$(tar tzf "$IMG" | sed 's,/$,,; s,^\./,,' | grep -vc '^\.\?$')
SL=$BASE/slurm
mkdir -p "$SL"/munge "$SL"/ctld "$SL"/spool "$SL"/log
chmod 0755 "$SL" "$SL"/munge
# The README script's /var/tmp and /shared, here.
mkdir -p "$BASE/var-tmp" "$BASE/shared/records" "$BASE/shared/images" "$BASE/logs"
chmod 1777 "$BASE/var-tmp" "$BASE/shared/records" "$BASE/logs"
cp "$IMG" "$BASE/shared/images/build.tar.gz"
chmod 0644 "$BASE/shared/images/build.tar.gz"

# ---- the cluster ----------------------------------------------------------

# free_port: a TCP port nothing listens on here.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
}
HOST=$(hostname -s)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(free_port); done
KILLWAIT=15
cat >"$SL/slurm.conf" <<EOF
ClusterName=sbxtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SL/munge/socket
StateSaveLocation=$SL/ctld
SlurmdSpoolDir=$SL/spool
SlurmctldPidFile=$SL/slurmctld.pid
SlurmdPidFile=$SL/slurmd.pid
SlurmctldLogFile=$SL/log/slurmctld.log
SlurmdLogFile=$SL/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$SL/jobcomp.txt
MailProg=/bin/true
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=$KILLWAIT
MinJobAge=600
NodeName=sbxnode NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=32 Sockets=1 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=8000 State=UNKNOWN
PartitionName=sbx Nodes=sbxnode Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$SL/slurm.conf

dd if=/dev/urandom of="$SL/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 0400 "$SL/munge/munge.key"

fleet_stop() {
	local f p
	for f in slurmd slurmctld; do
		p=$(cat "$SL/$f.pid" 2>/dev/null) && kill "$p" 2>/dev/null
	done
	[ -S "$SL/munge/socket" ] && munged --stop --socket="$SL/munge/socket" >/dev/null 2>&1
	for _ in $(seq 50); do
		fleet_daemons | grep -q . || return 0
		sleep 0.2
	done
	fleet_daemons | awk '{print $1}' | xargs -r kill -9 2>/dev/null
}
# fleet_daemons: our daemons (and job steps) still running.
fleet_daemons() {
	local p
	for p in /proc/[0-9]*; do
		case "$(cat "$p/comm" 2>/dev/null)" in
		munged | slurmctld | slurmd | slurmstepd)
			tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "$SL" ||
				grep -qsF "SLURM_CONF=$SL/" "$p/environ" 2>/dev/null || continue
			echo "${p#/proc/} $(cat "$p/comm")"
			;;
		esac
	done
}
trap 'fleet_stop; tap_cleanup' EXIT

munged -f --key-file="$SL/munge/munge.key" --socket="$SL/munge/socket" \
	--pid-file="$SL/munge/munged.pid" --log-file="$SL/log/munged.log" \
	--seed-file="$SL/munge/munged.seed" --num-threads=4 2>>"$SL/log/munged.stderr"
check "munged starts with the scratch key and socket" \
	sh -c 'munge -S "$1" -n | unmunge -S "$1" >/dev/null' sh "$SL/munge/socket"
slurmctld -i -f "$SL/slurm.conf"
slurmd -N sbxnode -f "$SL/slurm.conf"
up=1
end=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt "$end" ]; do
	timeout 10 sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle && { up=0; break; }
	sleep 0.5
done
ok $up "slurmctld and slurmd come up (node idle)"
if [ $up -ne 0 ]; then
	tail -n 20 "$SL"/log/*.log | sed 's/^/# /'
	echo "Bail out! the one-node cluster did not start"
	exit 1
fi
routes=$(ip -4 route show; ip -6 route show | grep -v '^\(::1\|fe80\)')
ok $([ -z "$(printf '%s' "$routes" | grep -v '^10\.254\.0\.1 \|^local ')" ]; echo $?) \
	"the daemons run in a network namespace with no route out ($(ip -o link | awk -F': ' '{print $2}' | tr '\n' ' '))"

# ---- the array jobs -------------------------------------------------------

# The README's batch script, its paths moved here, sbx the binary under test.
awk '/^<!-- fleet-sbatch -->/ {f = 1; next} f && /^```/ {if (s) exit; s = 1; next} f && s' \
	"$TAP_ROOT/README.md" >"$SL/readme.sh"
sed -e "s|/var/tmp/|$BASE/var-tmp/|g; s|/shared/|$BASE/shared/|g" \
	-e "s|^exec sbx |exec $SBX |" "$SL/readme.sh" >"$SL/task.sh"
chmod 0755 "$SL/task.sh"
grep -q "^exec $SBX run -p ci " "$SL/task.sh" && grep -q '^#SBATCH --array=1-20' "$SL/task.sh"
ok $? "the README's sbatch script is the tasks' script"

# What each task does, by its number (the script runs it as ./run-task N
# in the job's working directory, copy-on-write in the jail).
kinds="ok:1-10 fail:11-14 timeout:15-16 timeout-deaf:17 cancel:18 cancel-deaf:19 cancel-killed:20"
kind_of() { # kind_of N
	local k r lo hi
	for k in $kinds; do
		r=${k#*:}
		lo=${r%-*}
		hi=${r#*-}
		[ "$1" -ge "$lo" ] && [ "$1" -le "$hi" ] && { echo "${k%%:*}"; return; }
	done
}
{
	echo '#!/bin/sh'
	echo 'case $1 in'
	for n in $(seq 20); do echo "$n) kind=$(kind_of "$n") ;;"; done
	echo 'esac'
	cat <<'EOF'
case $kind in
ok) seq 1 20000 > numbers && sort -rn numbers | head -n 1 > top && test "$(cat top)" = 20000 && echo done ;;
fail) echo failing on purpose >&2; exit "$1" ;;
timeout | cancel) echo waiting; exec sleep 600 ;;
*) trap 'echo ignoring TERM' TERM; echo waiting; while :; do sleep 1; done ;;
esac
EOF
} >"$WD/run-task"
chmod 0755 "$WD/run-task"
TASKS_root=$(seq 20)
TASKS_user="1 2 11 15 19 20"

# as_node MODE CMD...: CMD as the tasks' user (root, or nobody), with the
# node-local state and cache the script gives its sbx.
as_node() {
	local m=$1 u=0
	shift
	[ "$m" = user ] && u=65534
	sbx_as_dirs "$m" "$BASE/var-tmp/sbx-$u/state" "$BASE/var-tmp/sbx-$u/cache" "$@"
}

# submit MODE: the array job's id (the script's #SBATCH lines, with the
# array, a 1-minute time limit and the output files set here).  The tasks
# get this small environment as it is (--export=ALL of env -i's): a named
# list or NONE would have slurmd load the user's login environment for
# each task (su - USER), which takes seconds with a busy root profile and
# pushed tasks into the time limit.
submit() {
	local mode=$1 uid=0 tasks=1-20
	[ "$mode" = user ] && uid=65534 tasks=$(echo $TASKS_user | tr ' ' ,)
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" SLURM_CONF="$SLURM_CONF" \
		SBX_TEST_MARK="${SBX_TEST_MARK:-}" \
		sbatch --parsable --uid=$uid --gid=$uid --array="$tasks" --time=1 \
		--job-name="sbx-$mode" --chdir="$WD" --output="$BASE/logs/%A_%a.out" \
		--export=ALL "$SL/task.sh"
}
T0=$(date +%s)
JR=$(submit root)
JU=$(submit user)
ok $([ -n "$JR" ] && [ -n "$JU" ]; echo $?) "sbatch takes a 20-task and a 6-task array job ($JR, $JU)"
REC_root=$BASE/shared/records/$JR
REC_user=$BASE/shared/records/$JU

# running MODE N: task N's sandbox runs (its jail is up).
running() {
	as_node "$1" "$SBX" ps --json 2>/dev/null |
		jq -e --arg n "job-$2" 'any(.[]; .name == $n and .state == "running")' >/dev/null
}
# wait_running MODE N...: up to 60 s each.
wait_running() {
	local mode=$1 n
	shift
	for n in "$@"; do
		for _ in $(seq 300); do
			running "$mode" "$n" && break
			sleep 0.2
		done
		running "$mode" "$n" || return 1
	done
}
wait_running root 18 19 20 && wait_running user 19 20
ok $? "the tasks to cancel (root's 18-20, nobody's 19-20) have their jails up"
# The job's time limit must not end task 20 between its SIGTERM and its
# SIGKILL (a second signal to sbx, which then ends the jail itself): its
# limit goes up first, on a slow machine the jails come up near the minute.
scontrol update JobId="${JR}_20" TimeLimit=10 &&
	scontrol update JobId="${JU}_20" TimeLimit=10
ok $? "task 20's time limit raised to 10 minutes (scontrol update)"
# 18, 19: scancel (SIGTERM, SIGKILL KillWait later).  20: SIGTERM to the
# batch step (sbx), and SIGKILL 2 s later, well before sbx's stop timeout
# (10 s): the SIGKILL reaches sbx while its jail still runs.
scancel "${JR}_18" "${JR}_19" "${JU}_19" &&
	scancel --batch --signal=TERM "${JR}_20" "${JU}_20" && sleep 2 &&
	scancel --batch --signal=KILL "${JR}_20" "${JU}_20"
ok $? "scancel of tasks 18 and 19; SIGTERM and then SIGKILL of task 20"

# Everything ends: the time limit (1 minute, checked every 30 s by
# slurmctld), then the stop timeout or KillWait.
for _ in $(seq 200); do
	[ -z "$(timeout 10 squeue -h -j "$JR,$JU" 2>/dev/null)" ] && break
	sleep 1
done
ok $([ -z "$(timeout 10 squeue -h -j "$JR,$JU" 2>/dev/null)" ]; echo $?) "both array jobs end ($(($(date +%s) - T0)) s)"

# ---- what Slurm saw ---------------------------------------------------------

# slurm_end JOB TASK: "STATE EXITCODE" of the task in the job completion log.
slurm_end() {
	grep -E "ArrayJobId=$1 ArrayTaskId=$2 " "$SL/jobcomp.txt" |
		sed -n 's/.* JobState=\([A-Z_]*\) .* ExitCode=\([0-9]*:[0-9]*\).*/\1 \2/p' | tail -n 1
}
for mode in root user; do
	if [ $mode = root ]; then J=$JR T=$TASKS_root; else J=$JU T=$TASKS_user; fi
	bad= ends=
	for n in $T; do
		got=$(slurm_end "$J" "$n")
		case $(kind_of "$n") in
		ok) want="COMPLETED 0:0" ;;
		fail) want="FAILED $n:0" ;;
		timeout*) want="TIMEOUT" ;;
		cancel-killed) want="FAILED 0:9" ;;
		cancel*) want="CANCELLED" ;;
		esac
		ends="$ends $n:${got// /=}"
		case "$got" in
		"$want" | "$want "*) ;;
		*) bad="$bad task $n: '$got', want '$want';" ;;
		esac
	done
	diag "$mode, Slurm's JobState=ExitCode of each task:$ends"
	[ -z "$bad" ] || diag "$bad"
	ok $([ -z "$bad" ]; echo $?) "$mode: each task's end reached Slurm (exit codes of the failed, TIMEOUT, CANCELLED, killed by signal 9)"
done

# ---- the run logs ---------------------------------------------------------

for mode in root user; do
	if [ $mode = root ]; then R=$REC_root T=$TASKS_root; else R=$REC_user T=$TASKS_user; fi
	bad=
	for n in $T; do
		f=$R/job-$n.jsonl
		if ! jq -e -s 'length > 0 and all(.[]; type == "object" and has("event"))' "$f" >/dev/null 2>&1; then
			bad="$bad job-$n.jsonl does not parse;"
			continue
		fi
		name=$(jq -r 'select(.event == "start") | .name' "$f")
		[ "$name" = "job-$n" ] || bad="$bad job-$n.jsonl names '$name';"
		got=$(jq -r 'select(.event == "exit") | "\(.exit.status) \(.exit.reason) \(.exit.stop)"' "$f" | tail -n 1)
		case $(kind_of "$n") in
		ok) want="0 exited null" ;;
		fail) want="$n exited null" ;;
		timeout | cancel) want="143 signaled null" ;;
		timeout-deaf | cancel-deaf) want="137 stopped stop-timeout" ;;
		cancel-killed) want= ;;
		esac
		[ "$got" = "$want" ] || bad="$bad job-$n: '$got', want '$want';"
	done
	[ -z "$bad" ] || diag "$bad"
	ok $([ -z "$bad" ]; echo $?) "$mode: all $(echo $T | wc -w) run logs parse, name their task and say how it ended"
done

# ---- kept and removed sandboxes -------------------------------------------

for mode in root user; do
	ps=$(as_node $mode "$SBX" ps -a --json)
	if [ $mode = root ]; then fails="11 12 13 14" oks=$(seq 10); else fails=11 oks="1 2"; fi
	bad=
	for n in $oks; do
		printf '%s' "$ps" | jq -e --arg n "job-$n" 'any(.[]; .name == $n)' >/dev/null &&
			bad="$bad job-$n (succeeded) was kept;"
	done
	names=
	for n in $fails; do names="$names job-$n"; done
	# shellcheck disable=SC2086
	recs=$(as_node $mode "$SBX" inspect --json $names)
	for n in $fails; do
		# one SANDBOX: its record; several: an array of them
		st=$(printf '%s' "$recs" | jq -r --arg n "job-$n" '(if type == "array" then .[] else . end) | select(.name == $n) | "\(.kept) \(.exit.status)"')
		[ "$st" = "true $n" ] || bad="$bad job-$n: kept/exit '$st';"
	done
	[ -z "$bad" ] || diag "$bad"
	ok $([ -z "$bad" ]; echo $?) "$mode: failed tasks kept with their records (inspect --json), successful ones removed"
done

# ---- nothing left behind ----------------------------------------------------

ids_of() { # ids_of DIR: the sandbox ids in the run logs in DIR
	cat "$1"/*.jsonl 2>/dev/null | jq -r 'select(.event == "start") | .id'
}
IDS="$(ids_of "$REC_root") $(ids_of "$REC_user")"
# procs: sbx processes (a purger of the trash may still be at work: it is
# given 10 s) and the tasks' own.
procs() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		case "$(readlink "$p/exe" 2>/dev/null)" in "$SBX") echo "sbx ${p#/proc/} $(cat "$p/comm" 2>/dev/null)" ;; esac
		{ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -q "^SLURM_ARRAY_JOB_ID=" && echo "task ${p#/proc/}"
	done
}
for _ in $(seq 50); do
	[ -z "$(procs)" ] && break
	sleep 0.2
done
procs=$(procs)
# The jails' own processes have a clear environment: find them by the
# commands only they run.
jailprocs=$(pgrep -af -- 'sleep 600|do sleep 1' || true)
ok $([ -z "$procs$jailprocs" ]; echo $?) "no sbx, task or jail process is left"
[ -z "$procs$jailprocs" ] || diag "$procs $jailprocs"
mounts=$(awk -v b="$BASE/" 'index($5, b) == 1 {print $5}' /proc/self/mountinfo)
ok $([ -z "$mounts" ]; echo $?) "no mount is left under the state and cache directories"
[ -z "$mounts" ] || diag "$mounts"

cgroups_of() { # cgroups_of IDS...: their cgroup directories
	local id
	for id in "$@"; do
		find /sys/fs/cgroup -maxdepth 6 -type d \( -name "sbx-$id" -o -name "sbx-sup-$id" \) 2>/dev/null
	done
}
killed_ids=$(cat "$REC_root/job-20.jsonl" "$REC_user/job-20.jsonl" 2>/dev/null | jq -r 'select(.event == "start") | .id')
other_ids=$(for id in $IDS; do printf '%s\n' "$killed_ids" | grep -qx "$id" || echo "$id"; done)
# shellcheck disable=SC2086
left=$(cgroups_of $other_ids)
ok $([ -z "$left" ]; echo $?) "tasks that sbx ended (time limit, scancel, stop timeout) left no cgroup"
[ -z "$left" ] || diag "$left"
for m in root user; do
	st=$(as_node $m "$SBX" ps -a --json | jq -r '.[] | select(.name == "job-20") | .state')
	ok $([ "$st" = lost ]; echo $?) "$m: task 20, whose sbx got the SIGKILL, is 'lost' in sbx ps ($st)"
	# The node's next run sweeps the empty cgroups such a run leaves.
	(cd "$WD" && as_node $m "$SBX" run -q --rm -- true)
done
for _ in $(seq 50); do
	# shellcheck disable=SC2086
	[ -z "$(cgroups_of $killed_ids)" ] && break
	sleep 0.2
done
# shellcheck disable=SC2086
left=$(cgroups_of $killed_ids)
ok $([ -z "$left" ]; echo $?) "the next run on the node removes the SIGKILLed supervisors' empty cgroups"
[ -z "$left" ] || diag "$left"

# ---- one cold image cache, many starts --------------------------------------

for m in root user; do
	if [ $m = root ]; then R=$REC_root C=$BASE/var-tmp/sbx-0/cache; else R=$REC_user C=$BASE/var-tmp/sbx-65534/cache; fi
	imgs=$(find "$C/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat ! -name '.tmp-*' | wc -l)
	tmps=$(find "$C/images" -mindepth 1 -maxdepth 1 -name '.tmp-*' | wc -l)
	d=$(find "$C/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat ! -name '.tmp-*' | head -n 1)
	n=$(cd "$d" 2>/dev/null && find . -mindepth 1 | wc -l)
	shas=$(cat "$R"/*.jsonl | jq -r 'select(.event == "start") | .rootfs.sha256' | sort -u)
	cold=$(cat "$R"/*.jsonl | jq -r 'select(.event == "start") | .rootfs.cached' | grep -c false)
	ok $([ "$imgs" -eq 1 ] && [ "$tmps" -eq 0 ] && [ "$n" -eq "$NENTRIES" ] && [ "$(lines "$shas")" -eq 1 ] && [ "$cold" -eq 1 ]; echo $?) \
		"$m: the tasks shared one complete image from one cold cache ($imgs image, $tmps half, $n/$NENTRIES entries, $cold of them unpacked it)"
done

# ---- one report of the array --------------------------------------------------

# The README's jq program over the run logs (the records a job ships back).
JQ=$(awk '/^<!-- fleet-report -->/ {f = 1; next} f && /^```/ {if (s) exit; s = 1; next} f && s' "$TAP_ROOT/README.md" |
	sed -n '/^jq /,$p')
ok $([ -n "$JQ" ]; echo $?) "the README has the fleet report's jq line"
report=$(cd "$REC_root" && eval "${JQ/records\//}" 2>&1)
got=$(printf '%s' "$report" | jq -c '[.sandboxes, .failed, ([.rows[] | select(.exit == 0)] | length)]' 2>&1)
ok $([ "$got" = "[20,10,10]" ]; echo $?) "the jq report of the 20 run logs: 20 rows, 10 failed, 10 exit 0 ($got)"
got=$(printf '%s' "$report" | jq -r '.rows[] | select(.name == "job-12") | "\(.exit) \(.wall_ms > 0) \(.mem_peak > 0) \(.connections_denied)"')
ok $([ "$got" = "12 true true 0" ]; echo $?) "a row has exit, wall, peak memory and connections denied ($got)"

summary=$(as_node root "$SBX" inspect --summary --json --all)
got=$(printf '%s' "$summary" | jq -c '[.sandboxes, ([.rows[] | select(.name | startswith("job-"))] | length), ([.rows[] | .exit] | map(select(. != null)) | sort)]')
ok $([ "$got" = "[10,10,[11,12,13,14,137,137,143,143,143]]" ]; echo $?) \
	"sbx inspect --summary --json --all: the node's kept sandboxes in one report ($got)"
text=$(as_node root "$SBX" inspect --summary --all)
printf '%s\n' "$text" | tail -n 1 | grep -q '^10 sandboxes: 0 exited 0, 9 failed, 1 running or lost; 0 connections denied'
ok $? "sbx inspect --summary: a table and the totals ($(printf '%s\n' "$text" | tail -n 1))"

# ---- the cluster stops -----------------------------------------------------

fleet_stop
left=$(fleet_daemons)
ok $([ -z "$left" ]; echo $?) "munged, slurmctld and slurmd stop"
for m in root user; do as_node $m "$SBX" destroy --all >/dev/null 2>&1; done
done_testing
