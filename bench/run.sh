#!/bin/bash
# bench/run.sh - `make bench`: sbx against its peers, side by side in one
# invocation.  Every figure is a ratio of medians of alternating runs
# (BENCH_RUNS, default 21) with the peer's exact command printed; absolute
# numbers are context only.
#
#   start-up, cached busybox image, /bin/true   bench/startup.sh: vs bwrap (minimal and
#                                               with the same mounts), unshare, podman,
#                                               firejail, systemd-nspawn; default and
#                                               minimal profile
#   start-up, host root, /bin/true              vs bwrap --ro-bind / /, vs unshare
#   start-up vs image size                      cached Debian minbase vs cached busybox
#   throughput                                  100 runs of /bin/true, 2 at a time, vs bwrap:
#                                               default and minimal profile; the default
#                                               one also vs bwrap with its mounts
#   series                                      1000 runs in series: last 100 / first 100
#   time to exec                                (in bench/startup.sh) start to the
#                                               command's first instruction
#   memory                                      peak RSS (VmHWM) of the sbx supervisor
#                                               while the jail sleeps, vs bwrap's
#   unpack of a ~270 MB .tar.gz                 bench/unpack.sh: vs bsdtar -xf (its
#                                               own lines, BENCH_UNPACK_RUNS runs each)
#   first use of that tarball                   sbx run into an empty cache vs
#                                               bsdtar -xf into a fresh dir (and + sync)
#   proxy, 1 GiB                                bench/proxy.sh: vs direct loopback
#   diff, 10 changed files of 10,000            sbx diff of a kept sandbox vs git diff
#                                               --no-index of the same change
#
# As root, then (when root) the start-up, image-size, throughput and memory
# lines again as nobody (setpriv).  The Debian minbase tarball is built once
# with debootstrap (tests/lib/minbase.sh, root) and kept in bench/out/.
#
# Output: the sections as they run, then a Markdown table (also in
# bench/out/results.md, for README's Performance section); the whole log is
# bench/out/bench.log.
#
# Environment: SBX (binary), BENCH_RUNS (21), BENCH_UNPACK_RUNS (3: each
# run unpacks ~600 MB four times; about 20 s a run on 2 cores),
# BENCH_FIRSTUSE_RUNS (BENCH_RUNS),
# BENCH_PROXY_ROUNDS (21), BENCH_PROXY_MB (1024), BENCH_BATCH (100),
# BENCH_SERIES (1000),
# BENCH_ONLY (comma list of: startup,host,size,throughput,series,memory,unpack,tls,
# firstuse,proxy,diff,user; default all).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
SBX=${SBX:-$ROOT/sbx}
case "$SBX" in /*) ;; *) SBX=$ROOT/$SBX ;; esac
export SBX
N=${BENCH_RUNS:-21}
UNPACK_RUNS=${BENCH_UNPACK_RUNS:-3}
FIRSTUSE_RUNS=${BENCH_FIRSTUSE_RUNS:-$N}
PROXY_ROUNDS=${BENCH_PROXY_ROUNDS:-21}
PROXY_MB=${BENCH_PROXY_MB:-1024}
BATCH=${BENCH_BATCH:-100}
SERIES=${BENCH_SERIES:-1000}
ONLY=${BENCH_ONLY:-all}
OUT=$ROOT/bench/out
mkdir -p "$OUT"
RES=$OUT/results.tsv
: >"$RES"
exec > >(tee "$OUT/bench.log") 2>&1

[ -x "$SBX" ] || { echo "bench: build sbx first ($SBX)"; exit 1; }
for c in bwrap unshare bsdtar python3 curl; do
	command -v $c >/dev/null || { echo "bench: $c missing (tests/deps.sh --install)"; exit 1; }
done

TMP=$(mktemp -d /var/tmp/sbx-bench.XXXXXX)
chmod 0755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
# A private copy of the binary: a rebuild of ./sbx during the bench (a
# shared tree) must not break or change it half-way.
cp "$SBX" "$TMP/sbx" && chmod 0755 "$TMP/sbx" || exit 1
SBX_BUILT=$SBX
SBX=$TMP/sbx
export SBX

want() { [ "$ONLY" = all ] || [[ ",$ONLY," == *",$1,"* ]]; }

machine() {
	local cpu mem hv ct
	cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
	mem=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
	hv=$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor: *//p')
	ct=$(systemd-detect-virt -c 2>/dev/null)
	echo "$cpu, $(nproc) cores, $mem RAM, kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME")${hv:+, $hv guest}${ct:+, in a $ct container}"
}
MACHINE=$(machine)
echo "# sbx bench, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# machine: $MACHINE"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# sbx: $SBX, a copy of $SBX_BUILT ($(git log -1 --format='commit %h, %cd' --date=format:%H:%MZ 2>/dev/null))"
echo "# $("$SBX" --version 2>&1 | head -n 1); bwrap $(bwrap --version | cut -d' ' -f2); $(unshare --version | head -n 1); $(bsdtar --version | cut -d' ' -f1-2); $(curl --version | head -n 1 | cut -d' ' -f1-2)"
echo "# $N alternating runs per line unless said; running as uid $(id -u)"

# keep_results: pass compare.py's output through, RESULT lines to $RES.
keep_results() {
	local who=$1 line
	while IFS= read -r line; do
		case $line in
		RESULT$'\t'*) printf '%s\t%s\n' "$who" "${line#RESULT$'\t'}" >>"$RES" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done
}

# result WHO LABEL PAIR RATIO TARGET MEDIANS PEERCMD: one line of the table.
result() {
	local verdict=- op val
	if [ "$5" != - ]; then
		op=${5% *} val=${5#* }
		verdict=$(awk -v r="$4" -v op="$op" -v v="$val" \
			'BEGIN {print ((op == "<=" ? r <= v : r >= v) ? "ok" : "MISSED")}')
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$verdict" "$6" "$7" >>"$RES"
}

# Fixtures: the busybox tarball, the Debian minbase tarball (cached).
BB=$OUT/busybox.tar.gz
[ -s "$BB" ] || tests/lib/mkrootfs.sh "$BB" >/dev/null || { echo "bench: mkrootfs failed"; exit 1; }
MINBASE=
if want size || want user; then
	MINBASE=$(tests/lib/minbase.sh "$OUT/minbase-bookworm.tar.gz" 2>"$TMP/minbase.err") ||
		{ MINBASE=; echo "# no Debian minbase tarball: $(tail -n 1 "$TMP/minbase.err")"; }
	case $MINBASE in "" | /*) ;; *) MINBASE=$ROOT/$MINBASE ;; esac
fi
chmod 0644 "$BB" ${MINBASE:+"$MINBASE"} 2>/dev/null

# section_* WHO PRE...: PRE is empty (root) or the setpriv prefix (nobody).
# Each runs with its own state/cache dir, from a scratch working dir.
ctx() { # ctx WHO: state, cache and working dirs writable by WHO
	local d=$TMP/$1
	mkdir -p "$d/state" "$d/cache" "$d/wd"
	chmod 0777 "$d" "$d/state" "$d/cache" "$d/wd"
	echo "$d"
}

BWRAP="bwrap --unshare-all --die-with-parent --new-session"
# firejail runs for root only here (firejail.users); where it is missing
# its lines are left out (apt-get install firejail systemd-container)
FIREJAIL=
[ "$(id -u)" = 0 ] && command -v firejail >/dev/null && FIREJAIL=firejail
for c in podman firejail systemd-nspawn; do
	command -v $c >/dev/null || echo "# $c not installed: its lines are left out (apt-get install podman firejail systemd-container)"
done

section_startup() {
	local who=$1 out
	shift
	echo
	echo "## start-up, cached busybox image, /bin/true ($who): bench/startup.sh $N"
	out=$("$@" bench/startup.sh "$N" 2>&1)
	echo "$out"
	local ms mb mu cb cu rb ru
	ms=$(awk '$1 == "sbx" && $2 == "median" {print $3}' <<<"$out")
	mb=$(awk '$1 == "bwrap" && $2 == "median" {print $3}' <<<"$out")
	mu=$(awk '$1 == "unshare" && $2 == "median" {print $3}' <<<"$out")
	cb=$(sed -n 's/^bwrap *median .* runs)  //p' <<<"$out")
	cu=$(sed -n 's/^unshare *median .* runs)  //p' <<<"$out")
	rb=$(awk '$1 == "ratio" && $2 == "sbx/bwrap" {print $3}' <<<"$out")
	ru=$(awk '$1 == "ratio" && $2 == "sbx/unshare" {print $3}' <<<"$out")
	[ -n "$rb" ] || { echo "bench: startup.sh gave no ratio"; return 1; }
	result "$who" "start-up, cached busybox image" sbx/bwrap "$rb" "<= 1.0" "$ms / $mb ms" "$cb"
	result "$who" "start-up, cached busybox image" sbx/unshare "$ru" "<= 1.5" "$ms / $mu ms" "$cu"
	# the same with equal mounts on both sides (bench/startup.sh says how)
	local me mm ce re rm
	me=$(awk '$1 == "bwrap-eq" && $2 == "median" {print $3}' <<<"$out")
	mm=$(awk '$1 == "sbx-min" && $2 == "median" {print $3}' <<<"$out")
	ce=$(sed -n 's/^bwrap-eq *median .* runs)  //p' <<<"$out")
	re=$(awk '$1 == "ratio" && $2 == "sbx/bwrap-eq" {print $3}' <<<"$out")
	rm=$(awk '$1 == "ratio" && $2 == "sbx-min/bwrap" {print $3}' <<<"$out")
	[ -n "$re" ] && result "$who" "start-up, cached busybox image, bwrap given the default profile's mounts" \
		sbx/bwrap-eq "$re" "<= 1.0" "$ms / $me ms" "$ce"
	[ -n "$rm" ] && result "$who" "start-up, cached busybox image, sbx given bwrap's mounts (read-only image, /tmp)" \
		sbx-min/bwrap "$rm" "<= 1.0" "$mm / $mb ms" "$cb"
	local mr rr
	mr=$(awk '$1 == "sbx-rm" && $2 == "median" {print $3}' <<<"$out")
	rr=$(awk '$1 == "ratio" && $2 == "sbx-rm/bwrap-eq" {print $3}' <<<"$out")
	[ -n "$rr" ] && result "$who" "start-up, cached busybox image, sbx --rm (layers in memory), bwrap given the default profile's mounts" \
		sbx-rm/bwrap-eq "$rr" "<= 1.0" "$mr / ${me:-$mb} ms" "${ce:-$cb}"
	# the other peers, for the default profile (sbx) and a minimal one (sbx-min)
	local a b r m
	for b in unshare podman firejail nspawn; do
		for a in sbx sbx-min; do
			r=$(awk -v p="$a/$b" '$1 == "ratio" && $2 == p {print $3}' <<<"$out")
			[ -n "$r" ] || continue
			m=$(awk -v p="$b" '$1 == p && $2 == "median" {print $3}' <<<"$out")
			local tg=-
			case $a/$b in sbx-min/unshare) tg="<= 1.5" ;; */podman) tg="<= 0.1" ;; esac
			[ "$a/$b" = sbx/unshare ] && continue # already above
			result "$who" "start-up, cached busybox image, $( [ $a = sbx ] && echo default || echo minimal) profile" \
				"$a/$b" "$r" "$tg" "$(awk -v p="$a" '$1 == p && $2 == "median" {print $3}' <<<"$out") / $m ms" \
				"$(sed -n "s/^$b *median .* runs)  //p" <<<"$out")"
		done
	done
	# time to exec: process start to the command's first instruction
	for p in sbx/bwrap-eq sbx/bwrap sbx-min/bwrap sbx-rm/bwrap-eq sbx/unshare sbx/podman sbx/firejail sbx/nspawn; do
		r=$(awk -v p="$p" '$1 == "exec-ratio" && $2 == p {print $3}' <<<"$out")
		[ -n "$r" ] || continue
		a=${p%/*} b=${p#*/}
		result "$who" "time to exec (start to the command's first instruction), cached busybox image" "$p" "$r" - \
			"$(awk -v k="$a" '$1 == k && $2 == "exec" {print $3}' <<<"$out") / $(awk -v k="$b" '$1 == k && $2 == "exec" {print $3}' <<<"$out") ms" \
			"$(sed -n "s/^$b *exec .* runs)  //p" <<<"$out")"
	done
	return 0
}

section_host() {
	local who=$1 d
	shift
	d=$(ctx "$who-host")
	echo
	(cd "$d/wd" && "$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" python3 "$ROOT/bench/compare.py" --runs "$N" \
		--label "start-up, host root" --target 'bwrap=<=:1.0' --target 'unshare=<=:1.5' \
		"sbx=$SBX run -q -- /bin/true" \
		"bwrap=$BWRAP --ro-bind / / --proc /proc --dev /dev --tmpfs /tmp --tmpfs /var/tmp -- /bin/true" \
		"unshare=unshare -Urmpfnui true" \
		${FIREJAIL:+"firejail=firejail --quiet --noprofile --net=none /bin/true"}) | keep_results "$who"
}

section_size() {
	local who=$1 d
	shift
	echo
	if [ -z "$MINBASE" ]; then
		echo "== start-up vs image size: skipped (no Debian minbase tarball; run once as root)"
		return 0
	fi
	d=$(ctx "$who-size")
	echo "# images: $BB ($(du -m "$BB" | cut -f1) MiB), $MINBASE ($(du -m "$MINBASE" | cut -f1) MiB, $(tar -tzf "$MINBASE" | wc -l) entries)"
	(cd "$d/wd" && "$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" python3 "$ROOT/bench/compare.py" --runs "$N" \
		--label "start-up vs image size (cached Debian minbase / cached busybox)" \
		--target 'busybox=<=:1.2' \
		"minbase=$SBX run -q --rootfs $MINBASE -- /bin/true" \
		"busybox=$SBX run -q --rootfs $BB -- /bin/true") | keep_results "$who"
}

# image_dir WHO PRE...: the cached busybox image's directory (for bwrap).
image_dir() {
	local d
	d=$(ctx "$1-img")
	shift
	(cd "$d/wd" && "$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" "$SBX" run -q --keep -n img --rootfs "$BB" -- /bin/true) &&
		"$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" "$SBX" inspect --json img | python3 -c \
			'import json,sys; print(json.load(sys.stdin)["rootfs"]["dir"])' &&
		"$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" "$SBX" destroy img >/dev/null
}

# The default profile (sbx) and the minimal one of the start-up lines
# (sbx-min, bench/minimal.ini: bwrap's mounts), each against bwrap minimal,
# and the default profile against bwrap given its mounts (bwrap-eq, as in
# the start-up lines: bench/bwrap_eq.py), all in the same rounds.
section_throughput() {
	local who=$1 d img eq
	shift
	d=$(ctx "$who-tp")
	img=$(image_dir "$who" "$@") || { echo "bench: no cached image dir"; return 1; }
	rm -rf "$d/bwimg" && cp -a "$img" "$d/bwimg" || { echo "bench: cannot copy the image"; return 1; }
	# the mount points made (as root), then the command as the user sees it
	eq=$(cd "$d/wd" && "$ROOT/bench/bwrap_eq.py" "$d/bwimg" "$ROOT/profiles/default.ini" /bin/true >/dev/null &&
		"$@" "$ROOT/bench/bwrap_eq.py" "$d/bwimg" "$ROOT/profiles/default.ini" /bin/true) ||
		{ echo "bench: bwrap_eq.py failed"; return 1; }
	echo
	(cd "$d/wd" && "$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" python3 "$ROOT/bench/compare.py" --runs "$N" \
		--batch "$BATCH" --parallel 2 --vs bwrap --target 'sbx=<=:1.0' --target 'sbx-min=<=:1.0' \
		--pair sbx/bwrap-eq --target 'sbx/bwrap-eq=<=:1.0' \
		--label "throughput, $BATCH runs of /bin/true 2 at a time, cached busybox image" \
		"sbx=$SBX run -q --rootfs $BB -- /bin/true" \
		"sbx-min=$SBX run -q -p $ROOT/bench/minimal.ini --rootfs $BB -- /bin/true" \
		"bwrap=$BWRAP --ro-bind $img / --proc /proc --dev /dev --tmpfs /tmp -- /bin/true" \
		"bwrap-eq=$eq") |
		keep_results "$who"
}

# 1000 runs in series, alternating with bwrap: start-up must stay flat
# (median of the last 100 against the first 100, for each side).
section_series() {
	local who=$1 d img out
	shift
	d=$(ctx "$who-series")
	img=$(image_dir "$who" "$@") || { echo "bench: no cached image dir"; return 1; }
	echo
	echo "## $SERIES runs in series, alternating with bwrap ($who)"
	out=$(cd "$d/wd" && "$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" python3 - "$SERIES" "$SBX" "$BB" "$img" <<'PY'
import statistics, subprocess, sys, time
n, sbx, bb, img = int(sys.argv[1]), *sys.argv[2:]
cmds = {"sbx": [sbx, "run", "-q", "--rootfs", bb, "--", "/bin/true"],
        "bwrap": ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", img, "/",
                  "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "/bin/true"]}
t = {k: [] for k in cmds}
for i in range(n):
    for k, c in cmds.items():
        s = time.perf_counter()
        if subprocess.run(c, stdout=subprocess.DEVNULL).returncode:
            sys.exit(f"bench: {k} failed in run {i}")
        t[k].append((time.perf_counter() - s) * 1000)
k = max(1, n // 10)
for name, v in t.items():
    a, b = statistics.median(v[:k]), statistics.median(v[-k:])
    print(f"{name} first {k} {a:.2f} ms last {k} {b:.2f} ms ratio {b / a:.2f}")
PY
)
	echo "$out"
	local f l r
	read -r _ _ _ f _ _ _ l _ _ r <<<"$(grep '^sbx ' <<<"$out")"
	[ -n "$r" ] || { echo "bench: the series gave no figures"; return 1; }
	result "$who" "$SERIES runs in series: median of the last $((SERIES / 10)) / the first $((SERIES / 10))" \
		"sbx last/first" "$r" "<= 1.1" "$l / $f ms" "(bwrap alongside: $(awk '$1 == "bwrap" {print $NF}' <<<"$out"))"
}

section_memory() {
	local who=$1 d img
	shift
	d=$(ctx "$who-mem")
	img=$(image_dir "$who" "$@") || { echo "bench: no cached image dir"; return 1; }
	echo
	(cd "$d/wd" && "$@" env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" python3 "$ROOT/bench/compare.py" --runs "$N" --rss 0.5 \
		--vs bwrap --target "sbx=<=:1.2" \
		--label "memory, peak RSS of the supervisor while the jail sleeps (cached busybox image)" \
		"sbx=$SBX run -q --rootfs $BB -- /bin/sleep 1" \
		"sbx-proxy=$SBX run -q --net proxy --rootfs $BB -- /bin/sleep 1" \
		"bwrap=$BWRAP --ro-bind $img / --proc /proc --dev /dev --tmpfs /tmp -- /bin/sleep 1") |
		keep_results "$who"
}

# The first `sbx run` of a ~270 MB .tar.gz (unpack.sh's tarball plus the
# busybox rootfs, so /bin/true runs) into an empty cache, against bsdtar -xf
# of the same tarball into a fresh directory (and with sync -f, as sbx
# syncs what it publishes to its cache).
section_firstuse() {
	local w=$OUT/unpack t d
	t=$w/run.tar.gz
	if [ ! -s "$t" ]; then
		[ -s "$w/bench.tar" ] || { echo "bench: no $w/bench.tar (unpack section first)"; return 1; }
		cp "$w/bench.tar" "$w/run.tar" && gzip -dc "$BB" >"$w/busybox.tar" &&
			tar -A -f "$w/run.tar" "$w/busybox.tar" && gzip -6 "$w/run.tar" &&
			rm -f "$w/busybox.tar" || { echo "bench: cannot build $t"; return 1; }
	fi
	d=$(ctx first)
	echo
	echo "# tarball: $t ($(du -m "$t" | cut -f1) MiB, $(tar -tzf "$t" | wc -l) entries)"
	(cd "$d/wd" && SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" python3 "$ROOT/bench/compare.py" \
		--runs "$FIRSTUSE_RUNS" --target 'bsdtar=<=:1.0' --target 'bsdtar-sync=<=:1.0' \
		--label "first use of a $(du -m "$t" | cut -f1) MB tarball: sbx run into an empty cache" \
		--setup "sbx=rm -rf '$d/cache' && sync" --setup "bsdtar=rm -rf '$d/x' && mkdir '$d/x' && sync" \
		--setup "bsdtar-sync=rm -rf '$d/x' && mkdir '$d/x' && sync" \
		"sbx=$SBX run -q --rootfs $t -- /bin/true" \
		"bsdtar=bsdtar -xf $t -C $d/x" \
		"bsdtar-sync=sh -c 'bsdtar -xf $t -C $d/x && sync -f $d/x'") | keep_results root
	rm -rf "$d/x" "$d/cache"
}

section_unpack() {
	local out line label ratio ms mp peer tgt
	echo
	echo "## unpack: bench/unpack.sh -n $UNPACK_RUNS -k -w bench/out/unpack (tarball kept for reruns)"
	out=$(bench/unpack.sh -n "$UNPACK_RUNS" -k -w "$OUT/unpack" 2>&1)
	echo "$out"
	while IFS= read -r line; do
		case $line in *"ratio sbx/peer = "*) ;; *) continue ;; esac
		label=$(sed 's/ *ratio sbx\/peer.*//' <<<"$line")
		ratio=$(sed 's/.*ratio sbx\/peer = \([0-9.]*\).*/\1/' <<<"$line")
		ms=$(sed 's/.*: sbx \([0-9.]*\)s, peer \([0-9.]*\)s.*/\1/' <<<"$line")
		mp=$(sed 's/.*: sbx \([0-9.]*\)s, peer \([0-9.]*\)s.*/\2/' <<<"$line")
		peer="bsdtar -xf TARBALL -C DIR"
		tgt=-
		case $label in
		"first use"*) peer="bsdtar -xf TARBALL -C DIR && sync -f DIR"; tgt="<= 1.0" ;;
		"unpack"*) tgt="<= 1.0" ;;
		esac
		result root "unpack.sh, median of $UNPACK_RUNS: $label (sbx: $(sbx_side "$label"))" sbx/bsdtar \
			"$(printf '%.2f' "$ratio")" "$tgt" "$ms / $mp s" "$peer"
	done <<<"$out"
}
sbx_side() {
	case $1 in
	"first use"*) echo "image unpack --no-cache: hash, unpack, syncfs, publish" ;;
	"second use"*) echo "image unpack of a known tarball" ;;
	*) echo "image unpack-to" ;;
	esac
}

section_proxy() {
	local out d g c cmd
	echo
	echo "## proxy: bench/proxy.sh $PROXY_MB $PROXY_ROUNDS"
	out=$(bench/proxy.sh "$PROXY_MB" "$PROXY_ROUNDS" 2>&1)
	echo "$out"
	d=$(awk '$1 == "direct" {print $2}' <<<"$out")
	g=$(awk '$1 == "proxy" && $2 == "GET" {print $3 " " $6}' <<<"$out")
	c=$(awk '$1 == "proxy" && $2 ~ /^CONNECT/ {print}' <<<"$out" | sed 's/.*CONNECT *\([0-9]*\) MiB\/s *ratio \([0-9.]*\).*/\1 \2/')
	cmd=$(sed -n 's/.*(peer: \(.*\), direct)$/\1/p' <<<"$out")
	[ -n "$d" ] && [ -n "$g" ] || { echo "bench: proxy.sh gave no figures"; return 1; }
	result root "proxy, $PROXY_MB MiB plain HTTP GET through sbx's proxy" proxy/direct "${g#* }" \
		">= 0.8" "${g% *} / $d MiB/s" "$cmd"
	result root "proxy, $PROXY_MB MiB CONNECT tunnel through sbx's proxy" proxy/direct "${c#* }" \
		">= 0.8" "${c% *} / $d MiB/s" "$cmd"
}

# Credential injection (root: a test host in its own netns): HTTPS through
# the injecting proxy against direct, and the CA's start-up cost.
section_tls() {
	local out p c d ca pm
	echo
	echo "## tls: bench/tls.sh 256 3"
	out=$(bench/tls.sh 256 3 2>&1)
	echo "$out"
	d=$(awk '$1 == "direct" {print $2}' <<<"$out")
	p=$(awk '$1 == "injecting" && $2 ~ /^CONNECT/ {print $3 " " $6}' <<<"$out")
	c=$(awk '$1 == "injecting" && $2 == "capture" {print $3 " " $6}' <<<"$out")
	ca=$(sed -n 's/^tls ca cost \([0-9.-]*\) ms.*/\1/p' <<<"$out")
	pm=$(sed -n 's/^tls proxy mode cost \([0-9.-]*\) ms (\(.*\))$/\1 \2/p' <<<"$out")
	[ -n "$d" ] && [ -n "$p" ] || { echo "bench: tls.sh gave no figures"; return 0; }
	result root "HTTPS $((256)) MiB through the injecting proxy (CONNECT)" tls/direct "${p#* }" \
		">= 0.5" "${p% *} / $d MiB/s" "curl --cacert CA https://TESTHOST/big.bin"
	result root "HTTPS 256 MiB through the injecting proxy (captured)" tls/direct "${c#* }" \
		">= 0.5" "${c% *} / $d MiB/s" "curl --cacert CA https://TESTHOST/big.bin"
	[ -n "$ca" ] && result root "start-up cost of the sandbox's CA (ms added)" "inject-plain" "$ca" \
		"<= 1" "-" "sbx run --net proxy -- true (no injected secret)"
	[ -n "$pm" ] && result root "start-up cost of proxy mode: capture, proxy, CA bundle (ms added)" "proxy-none" \
		"${pm%% *}" - "${pm#* }" "sbx run --net none -- true (the same profile)"
}

# sbx diff of a kept sandbox that changed 10 files of a 10,000-file project,
# against git diff --no-index of the project and a copy with the same 10
# changes: sbx reads the upper layer and the 10 host files it names.
section_diff() {
	local d p c
	d=$(ctx diff)
	p=$d/wd/proj c=$d/changed
	python3 -c 'import os, sys
for i in range(100):
    os.makedirs("%s/d%02d" % (sys.argv[1], i))
    for j in range(100):
        open("%s/d%02d/f%02d.txt" % (sys.argv[1], i, j), "w").write("line %d %d\n" % (i, j) * 20)' "$p"
	cp -a "$p" "$c"
	edit='for i in 0 1 2 3 4 5 6 7 8 9; do echo changed >>d0$i/f00.txt; done'
	(cd "$c" && sh -c "$edit")
	(cd "$p" && env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" \
		"$SBX" run -q --keep -n bench-diff -- sh -c "$edit") || { echo "bench: the diff run failed"; return 1; }
	echo
	(cd "$p" && env SBX_STATE_DIR="$d/state" SBX_CACHE_DIR="$d/cache" python3 "$ROOT/bench/compare.py" --runs "$N" \
		--label "diff, 10 changed files of 10,000" --target 'git=<=:1.0' \
		"sbx=sh -c '$SBX diff bench-diff . >/dev/null'" \
		"git=sh -c 'git diff --no-index $p $c >/dev/null; [ \$? -le 1 ]'") | keep_results "$ME"
	env SBX_STATE_DIR="$d/state" "$SBX" destroy bench-diff >/dev/null
}

ME=$(id -un)
want startup && section_startup "$ME"
want host && section_host "$ME"
want size && section_size "$ME"
want throughput && section_throughput "$ME"
want series && section_series "$ME"
want memory && section_memory "$ME"
# The nobody start-up lines before the unpack ones: unpacking frees
# hundreds of thousands of inodes, which a journal-less ext4 skips one by
# one for minutes on every new allocation (bench/startup.sh), and sbx
# allocates some per run while its peers allocate none.
if want user; then
	if [ "$(id -u)" = 0 ]; then
		NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --"
		echo
		echo "# the same as nobody (uid 65534, unprivileged user namespaces)"
		# shellcheck disable=SC2086
		{
			section_startup nobody $NOBODY
			section_host nobody $NOBODY
			section_size nobody $NOBODY
			section_throughput nobody $NOBODY
			want series && section_series nobody $NOBODY
			section_memory nobody $NOBODY
		}
	else
		echo "# (not root: the nobody lines are the lines above)"
	fi
fi
want unpack && section_unpack
want firstuse && section_firstuse
want proxy && section_proxy
want diff && section_diff
want tls && [ "$(id -u)" = 0 ] && section_tls

# The table.
{
	echo "Measured $(date -u +%Y-%m-%d) on: $MACHINE (load average at the end:" \
		"$(cut -d' ' -f1-3 /proc/loadavg))."
	echo "Ratios of medians of alternating runs, side by side in one \`make bench\`;" \
		"lower is better except for proxy throughput."
	echo
	echo "IMG in a command is the cached image's directory (sbx's cache), TARBALL and DIR the"
	echo "tarball and a fresh directory; the exact commands are in the bench log."
	echo
	echo "| as | measure | ratio | value | target | medians (sbx / peer) | peer command |"
	echo "|---|---|---|---|---|---|---|"
	while IFS=$'\t' read -r who label pair ratio tgt verdict med cmd; do
		t=$tgt
		[ "$tgt" != - ] && t="$tgt ($verdict)"
		printf '| %s | %s | %s | %s | %s | %s | `%s` |\n' "$who" "$label" "$pair" "$ratio" "$t" "$med" \
			"$(sed -E "s|[^ ]*/cache/images/[0-9a-f]+(-u[0-9]+)?|IMG|g; s|$TMP/first/x|DIR|g; s|$TMP/sbx|sbx|g; s|$ROOT/||g; s/\\|/\\\\|/g" <<<"$cmd")"
	done <"$RES"
} >"$OUT/results.md"
echo
echo "## results (bench/out/results.md)"
cat "$OUT/results.md"
