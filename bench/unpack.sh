#!/bin/bash
# bench/unpack.sh - sbx's tarball unpacker against bsdtar, side by side.
#
#   bench/unpack.sh [-n RUNS] [-k] [-w WORKDIR]
#
# Builds a tarball of a few hundred MB (generated files of varied sizes,
# plus copies of /usr/include, /usr/lib/python3*, /usr/share/locale), plain
# and gzip-compressed, then times RUNS (default 5) alternating extractions
# of each into a fresh directory (sync before each, rm after, untimed):
#
#   peer: bsdtar -xf TARBALL -C DIR
#   sbx:  sbx image unpack-to TARBALL DIR   (same unpacker as the cache,
#                                            SHA-256 computed as it reads)
#
# and prints the median wall-time ratio sbx / bsdtar (< 1 means sbx is
# faster), and the median ratio of CPU time (user + system), which other
# load on the machine disturbs much less than wall time.
# Then the first use through the cache (sbx image unpack --no-cache: hash,
# unpack, syncfs, publish) against `bsdtar -xf && sync -f`, and the second
# use (sbx image unpack of a known tarball: no hashing, no unpacking)
# against bsdtar -xf.  Only ratios are meaningful; absolute times are
# printed for context.  -k keeps WORKDIR.
set -euo pipefail

RUNS=5
KEEP=0
WORK=
while getopts n:kw: o; do
	case $o in
	n) RUNS=$OPTARG ;;
	k) KEEP=1 ;;
	w) WORK=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-k] [-w WORKDIR]" >&2; exit 2 ;;
	esac
done

cd "$(dirname "$0")/.."
SBX=${SBX:-$PWD/sbx}
[ -x "$SBX" ] || { echo "bench/unpack.sh: build sbx first ($SBX)" >&2; exit 1; }
command -v bsdtar >/dev/null || { echo "bench/unpack.sh: bsdtar missing (libarchive-tools)" >&2; exit 1; }
[ -n "$WORK" ] || WORK=$(mktemp -d /var/tmp/sbx-bench-unpack.XXXXXX)
mkdir -p "$WORK"
exec 9>"$WORK/.lock"
flock -n 9 || { echo "bench/unpack.sh: another run is using $WORK" >&2; exit 1; }
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT
export SBX_CACHE_DIR=$WORK/cache SBX_STATE_DIR=$WORK/state
# A private copy: a rebuild of the tree during the bench must not change it.
cp "$SBX" "$WORK/sbx" && SBX_ORIG=$SBX && SBX=$WORK/sbx

make_tree() {
	local src=$1
	mkdir -p "$src/gen" "$src/host"
	# Generated files: sizes from empty to 8 MiB, compressible text-like
	# content, in nested directories.
	python3 - "$src/gen" <<'EOF'
import os, random, sys, base64
root = sys.argv[1]
rnd = random.Random(42)
sizes = [0, 50, 700, 4096, 20000, 150000, 1 << 20, 8 << 20]
blob = base64.b64encode(rnd.randbytes(6 << 20))
total = 0
i = 0
while total < (220 << 20):
    d = os.path.join(root, "d%02d" % (i % 37), "s%d" % (i % 5))
    os.makedirs(d, exist_ok=True)
    n = sizes[i % len(sizes)] if i % 9 else rnd.randint(0, 300000)
    if n > len(blob):
        n = len(blob)
    off = rnd.randint(0, len(blob) - n) if n else 0
    with open(os.path.join(d, "f%05d.txt" % i), "wb") as f:
        f.write(blob[off:off + n])
    if i % 50 == 0:
        os.symlink("f%05d.txt" % i, os.path.join(d, "l%05d" % i))
    total += n
    i += 1
EOF
	for d in /usr/include /usr/lib/python3.11 /usr/share/locale; do
		[ -d "$d" ] && cp -a "$d" "$src/host/$(basename "$d")"
	done
	return 0
}

TAR=$WORK/bench.tar
if [ ! -e "$TAR.gz" ]; then
	echo "building the tarball in $WORK ..." >&2
	make_tree "$WORK/src"
	tar --format=posix --numeric-owner -C "$WORK/src" -cf "$TAR" .
	gzip -6 -k "$TAR"
	rm -rf "$WORK/src"
fi

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# timed CMD...: run CMD under /usr/bin/time; appends "wall cpu" to $WORK/t.
timed() {
	/usr/bin/time -f '%e %U %S' -o "$WORK/t1" "$@" >/dev/null || return 1
	awk '{printf "%s %.2f\n", $1, $2 + $3}' "$WORK/t1" >>"$WORK/t"
}

# time_one KIND TARBALL: "wall cpu" seconds of one extraction into a fresh dir.
time_one() {
	local kind=$1 t=$2 d=$WORK/out
	rm -rf "$d" "$SBX_CACHE_DIR" "$WORK/t"
	sync
	case $kind in
	bsdtar) mkdir "$d"; timed bsdtar -xf "$t" -C "$d" ;;
	bsdtar-sync) mkdir "$d"; timed bsdtar -xf "$t" -C "$d"; timed sync -f "$d" ;;
	sbx) timed "$SBX" image unpack-to "$t" "$d" ;;
	sbx-first) timed "$SBX" image unpack --no-cache "$t" ;;
	sbx-cached)
		"$SBX" image unpack "$t" >/dev/null; sync
		timed "$SBX" image unpack "$t" ;;
	esac
	awk '{w += $1; c += $2} END {print w, c}' "$WORK/t"
}

# compare LABEL PEER-KIND SBX-KIND TARBALL
compare() {
	local label=$1 peer=$2 mine=$3 t=$4 i a=() b=()
	for ((i = 0; i < RUNS; i++)); do
		if ((i % 2)); then
			b+=("$(time_one "$mine" "$t")"); a+=("$(time_one "$peer" "$t")")
		else
			a+=("$(time_one "$peer" "$t")"); b+=("$(time_one "$mine" "$t")")
		fi
	done
	local wa wb ca cb
	wa=$(printf '%s\n' "${a[@]}" | cut -d' ' -f1 | median)
	wb=$(printf '%s\n' "${b[@]}" | cut -d' ' -f1 | median)
	ca=$(printf '%s\n' "${a[@]}" | cut -d' ' -f2 | median)
	cb=$(printf '%s\n' "${b[@]}" | cut -d' ' -f2 | median)
	printf '%-30s ratio sbx/peer = %.3f   (median of %d: sbx %.3fs, peer %.3fs; cpu ratio %.3f: %.2fs / %.2fs)\n' \
		"$label" "$(echo "$wb / $wa" | bc -l)" "$RUNS" "$wb" "$wa" \
		"$(echo "$cb / ($ca + 0.001)" | bc -l)" "$cb" "$ca"
}

size() { du -m "$1" | cut -f1; }
echo "tarball: $TAR ($(size "$TAR") MiB, $(bsdtar -tf "$TAR" | wc -l) entries), $TAR.gz ($(size "$TAR.gz") MiB)"
echo "peer:    bsdtar -xf TARBALL -C DIR   ($(bsdtar --version))"
echo "sbx:     $SBX image unpack-to TARBALL DIR   (a copy of $SBX_ORIG)"
echo "running as uid $(id -u) on $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg);" \
	"$RUNS alternating runs each; fresh DIR, sync before every run"
compare "unpack .tar" bsdtar sbx "$TAR"
compare "unpack .tar.gz" bsdtar sbx "$TAR.gz"
echo "first use via the cache: sbx image unpack --no-cache TARBALL (hash+unpack+syncfs+rename)"
echo "                  peer:  bsdtar -xf TARBALL -C DIR && sync -f DIR"
compare "first use .tar.gz (with sync)" bsdtar-sync sbx-first "$TAR.gz"
echo "second use: sbx image unpack TARBALL of a known tarball vs peer bsdtar -xf"
compare "second use .tar.gz (cached)" bsdtar sbx-cached "$TAR.gz"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (ratios are unreliable on a busy machine)"
