#!/bin/bash
# tests/escape/run.sh - the escape battery: attacks on `sbx run` written as
# a hostile jail (and a hostile tarball) would make them, each followed by a
# check of the HOST.  See tests/escape/README.md for the list, the classes,
# the CVEs they follow and what "contained" means for each.
#
#   tests/escape/run.sh            as root: every attack as root, the same
#                                  attacks again with sbx run by nobody
#   ESCAPE_MODES="root"            only one of the two halves ("root user")
#   ESCAPE_ONLY="fs tar"           only these groups (GROUPS_ALL below)
#   ESCAPE_RACE_ITER=N             runs of the mount-target race (default 40)
#   ESCAPE_KEEP=1                  keep the scratch directory
#   ESCAPE_TMPDIR=DIR              where it is made (default /srv; not under
#                                  /tmp, /var/tmp or /run)
#
# Output: TAP, one line per attack and mode ("ok N - contained root:fs/x" or
# "not ok N - ESCAPED user:tar/y: what happened"), then exactly
#   escape: N attacks, N contained, N escaped
# Exit 0 only when nothing escaped; 77 when not run as root.
#
# An attack's verdict combines the lines the attack programs print inside
# the jail (tests/escape/*_attack.c, seccomp_probe) with the driver's own
# checks of the host (files, mounts, processes, links, ipc); an attack that
# never reports counts as escaped ("no verdict"), so a crashed probe fails.
# Variables set here are used by groups.sh, which it sources.
# shellcheck disable=SC2034
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
ESC=$ROOT/tests/escape
SBX=${SBX:-$ROOT/sbx}
case "$SBX" in /*) ;; *) SBX=$ROOT/$SBX ;; esac
MODES=${ESCAPE_MODES:-root user}
GROUPS_ALL="fs fshost caps tar mnt race proc seccomp net state see cve tty res"
ONLY=${ESCAPE_ONLY:-$GROUPS_ALL}
RACE_ITER=${ESCAPE_RACE_ITER:-40}
PY=/usr/bin/python3
T0=$(date +%s)

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP the escape battery needs root (it runs the unprivileged half through setpriv)"
	exit 77
fi
[ -x "$SBX" ] || {
	echo "Bail out! no sbx binary at $SBX (run make)"
	exit 1
}
SBX_ORIG=$SBX
BINS="fs_attack proc_attack caps_attack net_attack res_attack tty_attack seccomp_probe cve_attack"
# shellcheck disable=SC2046
make -s -C "$ROOT" $(for b in $BINS; do printf 'tests/escape/%s ' "$b"; done) >/dev/null || {
	echo "Bail out! cannot build the attack programs"
	exit 1
}

# --- scratch space -------------------------------------------------------
# Not under /tmp or /var/tmp: those are the jail's own tmpfs, and with the
# host root as rootfs the jail must see (read-only) what lives here.  Not in
# the work tree either: a `make clean` elsewhere would remove it mid-run.
# /srv: a top-level directory the busybox image lacks, so the jail can make
# the working directory's mount point in it (a rootfs directory's /var is
# not the unprivileged jail's to write).
SCRATCH=${ESCAPE_TMPDIR:-/srv}
mkdir -p "$SCRATCH"
BASE=$(mktemp -d "$SCRATCH/sbx-escape.XXXXXX") || exit 1
chmod 0755 "$BASE"
# Copies of the binary under test and of the attack programs: a rebuild or
# a clean during the run cannot change them.
cp "$SBX_ORIG" "$BASE/sbx" && chmod 0755 "$BASE/sbx" && SBX=$BASE/sbx
XB=$BASE/x
mkdir -p "$XB" && for b in $BINS; do cp "$ESC/$b" "$XB/$b" || exit 1; done
chmod -R a+rX "$XB"
RESD=$BASE/results
HV=$BASE/hv # the host's victims: nothing in here may ever change
MAGIC=sbx-escape-magic-$$-$RANDOM$RANDOM
PIDS_TO_KILL=()
cleanup() {
	local p
	for p in "${PIDS_TO_KILL[@]}"; do kill "$p" 2>/dev/null; done
	for m in $MODES; do as_mode "$m" "$SBX" destroy --all >/dev/null 2>&1; done
	ipcrm -m "${HOST_SHMID:-x}" 2>/dev/null
	[ -n "${SEE_CG_DIR:-}" ] && rmdir "$SEE_CG_DIR" 2>/dev/null
	[ -n "${RUNDIR:-}" ] && rm -rf "$RUNDIR"
	if [ "${ESCAPE_KEEP:-0}" = 1 ]; then echo "# kept $BASE"; else rm -rf "$BASE"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$RESD" "$HV"/{ro,rootw,secret,tsym,mnt/{proc,dev,tmp,sys,bindt,run,secrets},race-victim,bin,run} \
	"$BASE"/{wd-root,wd-user,home/run,race/src,race/shared,bsrc}
echo "$MAGIC" >"$HV/magic"
echo ro-sentinel >"$HV/ro/sentinel"
echo rootw-sentinel >"$HV/rootw/sentinel"
echo "secret $MAGIC" >"$HV/secret/key"
echo "tfile $MAGIC" >"$HV/tfile"
echo nullfile >"$HV/mnt/nullfile"
echo payload >"$BASE/bsrc/payload"
echo payload >"$BASE/race/src/payload"
# Only sbx stands between the jail and these: the host modes allow it all.
chmod 0777 "$HV/ro" "$HV/rootw" "$HV/tsym" "$HV/mnt"/* "$HV/race-victim" "$BASE/race/shared" \
	"$BASE"/wd-* "$BASE/race" "$BASE/race/src"
chmod 0666 "$HV/ro/sentinel" "$HV/rootw/sentinel" "$HV/tfile" "$HV/mnt/nullfile"
chmod 0644 "$HV/secret/key" "$HV/magic"
chown 65534:65534 "$BASE/home" "$BASE/home/run"

# Set-uid and file-capability copies of the capability probe on the host.
cp "$XB/caps_attack" "$HV/bin/suid" && chmod 6755 "$HV/bin/suid"
cp "$XB/caps_attack" "$HV/bin/fcap" && setcap cap_sys_admin,cap_setuid,cap_dac_override+ep "$HV/bin/fcap"

# Watchdog: on this shared machine, processes have been seen stopped by an
# outside stop signal (state T in do_signal_stop, any owner, any test); a
# stopped wrapper would hang the battery.  Continue any stopped process
# below this script and say so (no attack here sends a stop signal).
WATCH_LOG=$BASE/watchdog.log
# (Its sleep is waited for, so the kill at the end takes the sleep along:
# an orphaned `sleep 2` outliving the battery was counted as a straggler.)
(
	sp=
	trap '[ -n "$sp" ] && kill "$sp" 2>/dev/null; exit 0' TERM
	while kill -0 $$ 2>/dev/null && { sleep 2 & sp=$!; wait "$sp"; }; do
		ps -eo pid=,ppid=,stat=,args= | awk -v top=$$ '
			{ pp[$1] = $2; st[$1] = $3 }
			END { for (p in pp) { q = p; while (q in pp && q != top && q > 1) q = pp[q]
				if (q == top && st[p] ~ /^T/) print p } }' | while read -r p; do
			kill -CONT "$p" 2>/dev/null &&
				echo "continued pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80))" >>"$WATCH_LOG"
		done
	done
) </dev/null >/dev/null 2>&1 &
PIDS_TO_KILL+=($!)

# --- images --------------------------------------------------------------
x_files=()
for b in $BINS; do x_files+=("$XB/$b:/x/$b"); done
mkdir -p "$BASE/img"
"$ROOT/tests/lib/mkrootfs.sh" "$BASE/img/base.tar" "${x_files[@]}" >/dev/null || {
	echo "Bail out! mkrootfs failed"
	exit 1
}
IMG=$BASE/img/base.tar
"$ESC/hostile_tars.sh" "$IMG" "$BASE/img" "$HV" || {
	echo "Bail out! hostile_tars.sh failed"
	exit 1
}
# A directory rootfs keeps what an unpacker drops: a setuid-root and a
# file-capability binary, device nodes.
RDIR=$BASE/rootdir
mkdir -p "$RDIR" && tar -C "$RDIR" --numeric-owner -xpf "$IMG"
mkdir -p "$RDIR/evil" "$RDIR/ro" "$RDIR/mnt/t"
cp "$HV/bin/suid" "$RDIR/x/suid" && chmod 6755 "$RDIR/x/suid"
cp "$XB/caps_attack" "$RDIR/x/fcap" && setcap cap_sys_admin,cap_setuid+ep "$RDIR/x/fcap"
mknod -m 0666 "$RDIR/evil/mem" c 1 1
mknod -m 0666 "$RDIR/evil/sda" b 8 0
# The main image: busybox, the attack programs, /ro and /mnt/t to bind on.
(cd "$BASE" && mkdir -p add/ro add/mnt/t && tar -C add --numeric-owner --owner=0 --group=0 -rf "$IMG" ./ro ./mnt)
chmod -R a+rX "$BASE/img"

# --- how sbx is run ------------------------------------------------------
# root: a private state/cache; user: nobody, with the XDG defaults under a
# home of its own (as an ordinary user would have them).
state_of() { if [ "$1" = root ]; then echo "$BASE/state-root"; else echo "$BASE/home/.local/state/sbx"; fi; }
cache_of() { if [ "$1" = root ]; then echo "$BASE/cache-root"; else echo "$BASE/home/.cache/sbx"; fi; }
as_mode() {
	local mode=$1
	shift
	if [ "$mode" = root ]; then
		(cd "${JR_CWD:-$BASE/wd-root}" && env SBX_STATE_DIR="$BASE/state-root" SBX_CACHE_DIR="$BASE/cache-root" "$@")
	else
		(cd "${JR_CWD:-$BASE/wd-user}" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE/home" USER=nobody "$@")
	fi
}
# jailrun ARGS...: `sbx run -q ARGS` in $MODE; sets $out, $rc, $err.
jailrun() {
	local ef=$RESD/.err.$BASHPID
	# shellcheck disable=SC2086
	out=$(as_mode "$MODE" env ${JR_ENV:-} timeout -k 5 120 "$SBX" run -q "$@" 2>"$ef")
	rc=$?
	err=$(head -c 600 "$ef")
	rm -f "$ef"
}

# --- verdicts ------------------------------------------------------------
# Lines "contained MODE:CLASS/NAME (detail)" / "ESCAPED MODE:CLASS/NAME: what"
# in $RES (one file per group and mode); a name's verdict is ESCAPED if
# any of its lines is.
jail() { # jail OUTPUT [SUFFIX]: the jail's own verdict lines
	printf '%s\n' "$1" | sed -nE "s#^(contained|ESCAPED) ([a-z]+/[A-Za-z0-9_.-]+)#\1 $MODE:\2${2:-}#p" >>"$RES"
}
hostfail() { # hostfail NAME WHAT: the host check of NAME failed
	echo "ESCAPED $MODE:$1: host: $2" >>"$RES"
}
verdict() { # verdict NAME STATUS DETAIL: a host-side verdict (0 = contained)
	if [ "$2" -eq 0 ]; then echo "contained $MODE:$1 ($3)"; else echo "ESCAPED $MODE:$1: $3"; fi >>"$RES"
}
# limitation NAME WHY: NAME reached something sbx documents it does not stop
# (README "Security", tests/escape/README.md): an ESCAPED verdict of NAME
# becomes a "limitation" line, reported but not counted as an attack.  Only
# for gaps the docs name; a contained verdict stays contained.
limitation() {
	local n=$1 why=$2
	sed -i -E "s#^ESCAPED ($MODE:$n)(:| |$)(.*)#limitation \1: $why (seen:\3)#" "$RES"
}
expect() { # expect NAME...: every one must have reported
	local n
	for n; do
		grep -qE "^(contained|ESCAPED|limitation) $MODE:$n( |:|$)" "$RES" ||
			echo "ESCAPED $MODE:$n: no verdict (the attack did not report; sbx rc=$rc: ${err:0:200})" >>"$RES"
	done
}
# Host state that no attack may change.
sig_hv() { (cd "$HV" && find . -printf '%p %y %m %n %U %s\n' | sort && find . -type f -exec cat {} + | md5sum); }
# Mounts under the scratch directory, less the writable-layer images of
# sandboxes running meanwhile (groups run a few at a time): ext4 from a
# loop device on exactly STATE/sandboxes/ID/disk.  The whole-run check at
# the end counts those too, when nothing runs.
host_mounts() {
	awk -v b="$BASE" 'index($0, b) {
		for (i = 7; $i != "-"; i++) ;
		if (index($5, b) == 1 &&
		    substr($5, length(b) + 1) ~ /^\/state-(root|user)\/sandboxes\/[0-9a-f]+\/disk$/ &&
		    $(i + 1) == "ext4" && $(i + 2) ~ /^\/dev\/loop[0-9]+$/) next
		n++ } END { print n + 0 }' /proc/self/mountinfo
}
check_mounts() { # check_mounts NAME: no host mount under the scratch dir
	local n
	n=$(host_mounts)
	[ "$n" -eq 0 ] || hostfail "$1" "$n mounts under $BASE in the host's mountinfo"
}
why() { printf '%s' "$err" | head -n 1 | sed -E 's/^(.{0,60}).*(.{70})$/\1...\2/'; }
sentinel() { # sentinel UID: a host process with an identifiable cmdline
	# 900 s at most: a battery killed before its cleanup leaves nothing for long.
	setpriv --reuid="$1" --regid="$1" --clear-groups -- bash -c 'exec -a sbxsentinel sleep 900' \
		</dev/null >/dev/null 2>&1 &
	echo $!
}

HOST_MOUNTINFO=$(awk '{print $5, $9}' /proc/self/mountinfo | sort)
HOSTNAME0=$(cat /proc/sys/kernel/hostname)
SWAP0=$(cat /proc/sys/vm/swappiness)
CORE0=$(cat /proc/sys/kernel/core_pattern)
MODPROBE0=$(cat /proc/sys/kernel/modprobe 2>/dev/null)
THP0=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
# The host settings fs_attack writes from the jail, and what it writes
# (tests/escape/fs_attack.c: "proc-sys-*", the /sys writes): "PATH VALUE".
SYSCTL_TARGETS="/proc/sys/kernel/hostname pwned-by-jail
/proc/sys/vm/swappiness $(((SWAP0 + 7) % 100))
/proc/sys/kernel/core_pattern |/tmp/pwned %p
/sys/kernel/mm/transparent_hugepage/enabled never
/sys/class/net/lo/mtu 1280
/sys/fs/cgroup/memory/release_agent /tmp/pwned
/sys/fs/cgroup/memory/notify_on_release 1"
sysctl_values() { # PATH and its value, one per line
	local path val
	while read -r path val; do
		printf '%s %s\n' "$path" "$(cat "$path" 2>/dev/null)"
	done <<<"$SYSCTL_TARGETS"
}
SYSCTL0=$(sysctl_values)
# sysctl_escapes: the settings that now hold the jail's value, and did not.
sysctl_escapes() {
	local path val before now
	while read -r path val; do
		before=$(grep -F "$path " <<<"$SYSCTL0" | head -n 1)
		before=${before#"$path "}
		now=$(cat "$path" 2>/dev/null)
		# THP shows the choice in brackets: "always madvise [never]".
		[[ $path == */transparent_hugepage/* ]] && now=$(sed -n 's/.*\[\(.*\)\].*/\1/p' <<<"$now") &&
			before=$(sed -n 's/.*\[\(.*\)\].*/\1/p' <<<"$before")
		[ "$now" = "$val" ] && [ "$before" != "$val" ] && printf '%s is now %s; ' "$path" "$now"
	done <<<"$SYSCTL_TARGETS"
}
NET0=$(ip -o link | sed 's/ qlen.*//'; ip -o addr; ip route; ip -6 route)
S_ROOT=$(sentinel 0)
# The host uid of a jail's root (100000, or above every /etc/subuid range).
JAIL_ROOT_UID=$("$SBX" doctor --json 2>/dev/null | jq -r '.host_base // empty')
JAIL_ROOT_UID=${JAIL_ROOT_UID:-100000}
S_100K=$(sentinel "$JAIL_ROOT_UID")
S_NOBODY=$(sentinel 65534)
SENTINELS="$S_ROOT $S_100K $S_NOBODY"
PIDS_TO_KILL+=("$S_ROOT" "$S_100K" "$S_NOBODY")
sleep 0.1
sentinels_alive() { local p; for p in $SENTINELS; do grep -q sbxsentinel "/proc/$p/cmdline" 2>/dev/null || return 1; done; }

# Host listeners: TCP on 127.0.0.1 and on the host's own address, an
# abstract Unix socket, and pathname sockets (a root one like the system
# bus, 0666; one owned by nobody, 0600, like its session bus).
PORT=$((20000 + RANDOM % 20000))
HOSTIP=$(ip -o -4 addr show scope global | awk '{sub("/.*", "", $4); print $4; exit}')
ABSTRACT=sbx-escape-$$
# The conventional place of such sockets is /run (the system bus, docker,
# $XDG_RUNTIME_DIR/bus); a second pair lives in a host directory the host
# root shows read-only.
RUNDIR=$(mktemp -d /run/sbx-escape.XXXXXX) && chmod 0755 "$RUNDIR"
$PY - "$PORT" "${HOSTIP:-127.0.0.1}" "$ABSTRACT" "$HV/run/sock" "$HV/run/usock" \
	"$RUNDIR/sock-root" "$RUNDIR/sock-user" "$BASE/listener.log" <<'PY' &
import os, select, socket, sys
port, ip, abstract, p1, p2, p3, p4, log = sys.argv[1:]
port = int(port)
ls = []
for addr in {"127.0.0.1", ip}:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(16); ls.append(s)
u = socket.socket(socket.AF_UNIX); u.bind("\0" + abstract); u.listen(16); ls.append(u)
for p, own, mode in ((p1, 0, 0o666), (p2, 65534, 0o600), (p3, 0, 0o666), (p4, 65534, 0o600)):
    u = socket.socket(socket.AF_UNIX); u.bind(p); os.chown(p, own, own); os.chmod(p, mode)
    u.listen(16); ls.append(u)
open(log, "a").write("ready\n")
parent = os.getppid()
while os.getppid() == parent:  # ends with the battery, even killed
    r, _, _ = select.select(ls, [], [], 2)
    for s in r:
        c, a = s.accept()
        open(log, "a").write("ACCEPT %r on %r\n" % (a, s.getsockname()))
        c.close()
PY
PIDS_TO_KILL+=($!)
for _ in $(seq 50); do grep -q ready "$BASE/listener.log" 2>/dev/null && break; sleep 0.1; done

HOST_SIG=$(sig_hv)

# What a jail must not see of the host (group see): its interfaces and MAC
# addresses, a disk, a sentinel cgroup beside the jails', its ids.
SEE_IFS=$(ls /sys/class/net | grep -vx lo | tr '\n' ' ')
SEE_MACS=$(cat /sys/class/net/*/address 2>/dev/null | grep -vx '00:00:00:00:00:00' | sort -u | tr '\n' ' ')
SEE_DISK=$(awk 'NR > 2 && $4 !~ /^(loop|ram)/ {print $4; exit}' /proc/partitions)
SEE_CG=sbx-escape-sentinel-$$
SEE_CG_DIR=
for d in /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup; do
	[ -e "$d/cgroup.procs" ] && mkdir "$d/$SEE_CG" 2>/dev/null && SEE_CG_DIR=$d/$SEE_CG && break
done
SEE_BOOT=$(cat /proc/sys/kernel/random/boot_id)
SEE_MACHINE=$(cat /etc/machine-id 2>/dev/null)

# Host SysV shm segment the jail must not find.
HOST_SHMID=$(ipcmk -M 4096 2>/dev/null | grep -oE '[0-9]+$')
HOST_SHMKEY=$(ipcs -m | awk -v id="$HOST_SHMID" '$2 == id {print $1}')
HOST_SHMKEY=$((HOST_SHMKEY))
# The host's SysV objects owned by the jails' host uids (other tests on this
# machine may create and remove their own meanwhile).
jail_ipc() { ipcs -m -q -s | awk -v r="$JAIL_ROOT_UID" -v u="$((JAIL_ROOT_UID + 4242))" '$1 ~ /^0x/ && ($3 == r || $3 == u || $3 == "nobody" || $3 == "65534") {print $1, $2, $3}' | sort; }
IPC0=$(jail_ipc)

# The attack groups (grp_fs, grp_tar, ...).
. "$ESC/groups.sh"

# ==========================================================================
# Run: the groups of both modes, a few at a time; resources and the tty
# group alone at the end (they load the machine and time things).
# ==========================================================================
run_group() { # run_group N GROUP MODE
	local MODE=$3 RES=$RESD/$1-$2-$3 t0=$SECONDS
	: >"$RES"
	"grp_$2"
	echo "$2 $3 $((SECONDS - t0))s" >>"$BASE/timings"
}
n=0
JOBS=${ESCAPE_JOBS:-3}
GROUP_PIDS=()
running() { local p c=0; for p in "${GROUP_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && c=$((c + 1)); done; echo $c; }
for g in fs fshost caps tar mnt race proc seccomp net state see cve; do
	case " $ONLY " in *" $g "*) ;; *) continue ;; esac
	for m in $MODES; do
		n=$((n + 1))
		while [ "$(running)" -ge "$JOBS" ]; do sleep 0.2; done
		run_group "$(printf %02d $n)" "$g" "$m" &
		GROUP_PIDS+=($!)
	done
done
for p in "${GROUP_PIDS[@]}"; do wait "$p"; done
for g in tty res; do
	case " $ONLY " in *" $g "*) ;; *) continue ;; esac
	for m in $MODES; do
		n=$((n + 1))
		run_group "$(printf %02d $n)" "$g" "$m"
	done
done

# Controls: the same probes run unconfined on the host must see an escape,
# or a "contained" above proves nothing.  Only harmless ones, that read or
# touch the battery's own files: never `fs_attack procsys` or `mknod`
# (they write sysctls and make device nodes), never `proc_attack` (it
# ptraces every process it sees), never `net_attack netlink`.
CTL=$BASE/controls
: >"$CTL"
# The exact host-settings check sees a setting that took the jail's value
# (a stand-in file, never a real sysctl), and only that one.
(
	f=$BASE/ctl-setting g=$BASE/ctl-other
	echo before >"$f" && echo before >"$g"
	SYSCTL_TARGETS="$f jail-value
$g jail-value"
	SYSCTL0=$(sysctl_values)
	echo jail-value >"$f" && echo someone-else >"$g"
	e=$(sysctl_escapes)
	if [ "$e" = "$f is now jail-value; " ]; then
		echo "ok - control: host/sysctls-unchanged sees a setting that took the jail's value, and ignores other changes" >>"$CTL"
	else
		echo "not ok - control: host/sysctls-unchanged saw '$e'" >>"$CTL"
	fi
)
control() { # control NAME CMD...: CMD's output must hold an ESCAPED line
	local name=$1 o
	shift
	o=$("$@" 2>&1)
	if printf '%s\n' "$o" | grep -q '^ESCAPED '; then
		echo "ok - control: $name reports the escape where it is allowed" >>"$CTL"
	else
		echo "not ok - control: $name saw nothing where the escape is allowed: $(printf '%s' "$o" | head -n 2 | tr '\n' ' ')" >>"$CTL"
	fi
}
case " $ONLY " in *" fs "*)
	mkdir -p "$BASE/ctl" && echo x >"$BASE/ctl/f"
	control fs/ro-write "$XB/fs_attack" ro-write ctl "$BASE/ctl/f"
	control fs/old-root "$XB/fs_attack" oldroot ctl "$HV/magic" "$MAGIC"
	control fs/proc-kallsyms "$XB/fs_attack" kallsyms
	;; esac
case " $ONLY " in *" see "*)
	# Unconfined, the probe sees the host's interfaces, disks, cgroups, ids.
	# shellcheck disable=SC2046
	control see/host-views sh -c "$(see_script)" sh host
	;; esac
case " $ONLY " in *" caps "*)
	control caps/five-sets-zero "$XB/caps_attack" caps
	control caps/setuid-host setpriv --reuid=1000 --regid=1000 --clear-groups -- "$XB/caps_attack" exec ctl "$HV/bin/suid"
	control caps/filecap-host setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all -- "$XB/caps_attack" exec ctl "$HV/bin/fcap"
	;; esac
case " $ONLY " in *" net "*)
	control net/raw-packet-vsock "$XB/net_attack" sockets
	control net/host-loopback-listener "$XB/net_attack" tcp ctl 127.0.0.1 "$PORT"
	control net/host-abstract-socket "$XB/net_attack" abstract ctl "$ABSTRACT"
	control net/host-unix-socket-run "$XB/net_attack" unixpath ctl "$RUNDIR/sock-root"
	;; esac
case " $ONLY " in *" net "*)
	# A listed literal is allowed by design: the proxy probe then gets through.
	control net/host-listener-via-proxy as_mode root "$SBX" run -q --rootfs "$IMG" --net proxy \
		--allow "127.0.0.1:$PORT" -- /bin/sh -c "$(proxy_script)"
	;; esac
case " $ONLY " in *" cve "*)
	control cve/masks "$XB/cve_attack" masks ctl
	# A process of its own in a pid namespace, running a binary it may
	# write: the watcher writes it once the process is gone.
	mkdir -p "$BASE/ctl" && cp "$(command -v busybox)" "$BASE/ctl/sleep"
	control cve/exe-overwrite unshare -pf --mount-proc sh -c \
		'"$1" 1 & exec "$2" exewrite 3 /nonexistent' sh "$BASE/ctl/sleep" "$XB/cve_attack"
	;; esac
case " $ONLY " in *" res "*)
	control res/disk-fill "$XB/res_attack" fill ctl "$BASE/ctl/fill" 1
	;; esac
case " $ONLY " in *" tty "*)
	mkdir -p "$BASE/ctl"
	MODE=root control tty/tiocsti tty_harness "$BASE/ctl/tiocsti-ctl" control
	[ -e "$BASE/ctl/tiocsti-ctl" ] && echo "ok - control: the tty harness's caller shell runs what TIOCSTI pushed" >>"$CTL" ||
		echo "not ok - control: TIOCSTI on an unconfined host did not reach the caller's shell" >>"$CTL"
	;; esac

# Whole-run host checks.
MODE=host RES=$RESD/99-host
: >"$RES"
[ "$(sig_hv)" = "$HOST_SIG" ]
verdict host/victims-unchanged $? "every file under $HV as before"
# New host mounts under the scratch directory or on the host's own system
# mount points (other tests on this machine mount elsewhere meanwhile).
MDIFF=$(diff <(printf '%s\n' "$HOST_MOUNTINFO") <(awk '{print $5, $9}' /proc/self/mountinfo | sort) |
	grep '^>' | awk -v b="$BASE" '{ m = $2 } index(m, b) == 1 ||
		m ~ /^\/(proc|dev|sys)(\/[^\/]*)?$/ || m ~ /^\/(tmp|run|etc|usr|var|root|home)?$/' | head -n 5 | tr '\n' ' ')
[ -z "$MDIFF" ]
verdict host/mountinfo-unchanged $? "${MDIFF:-no new mount under the scratch dir or on a system mount point}"
# Exact: a host setting counts as escaped only when it now holds the value
# fs_attack tried to write there (and did not before); anything else on a
# busy machine may change these meanwhile without the jail's help.
SYSCTL_ESC=$(sysctl_escapes)
[ -z "$SYSCTL_ESC" ]
verdict host/sysctls-unchanged $? "${SYSCTL_ESC:-hostname, vm.swappiness, core_pattern, THP, lo mtu, cgroup v1 release agents: none holds the value the jail wrote (controls included)}"
sentinels_alive
verdict host/sentinels-alive $? "sentinels of uid 0, $JAIL_ROOT_UID and 65534 alive"

# --- report --------------------------------------------------------------
[ -s "$WATCH_LOG" ] && sed 's/^/# watchdog: /' "$WATCH_LOG" | sort -u | head -n 20
[ -s "$BASE/timings" ] && echo "# seconds per group: $(tr '\n' ' ' <"$BASE/timings")(load $(cut -d' ' -f1-3 /proc/loadavg))"
cat "$CTL"
CTL_FAILED=$(grep -c '^not ok' "$CTL")
cat "$RESD"/[0-9]* | awk '
	{ verb = $1; rest = substr($0, length(verb) + 2)
	  name = rest; sub(/ .*$/, "", name); sub(/:$/, "", name)
	  if (verb == "limitation") { if (!(name in lim)) { lim[name] = rest; lorder[++nl] = name }; next }
	  if (!(name in seen)) { seen[name] = 1; order[++n] = name }
	  if (verb == "ESCAPED") { if (!(name in esc)) esc[name] = rest }
	  else if (!(name in ok)) ok[name] = rest }
	END {
	  c = 0; e = 0
	  for (i = 1; i <= nl; i++)
	    if (!(lorder[i] in seen)) printf "# limitation (documented, not counted): %s\n", lim[lorder[i]]
	  for (i = 1; i <= n; i++) {
	    k = order[i]
	    if (k in esc) { e++; printf "not ok %d - ESCAPED %s\n", i, esc[k] }
	    else { c++; printf "ok %d - contained %s\n", i, ok[k] }
	  }
	  printf "1..%d\n", n
	  printf "# %d seconds\n", '"$(($(date +%s) - T0))"'
	  printf "escape: %d attacks, %d contained, %d escaped\n", n, c, e
	  exit e > 0
	}'
BATTERY=$?
[ "$CTL_FAILED" -eq 0 ] || echo "# $CTL_FAILED controls failed: the probes could not see an unconfined host"
[ "$BATTERY" -eq 0 ] && [ "$CTL_FAILED" -eq 0 ]
