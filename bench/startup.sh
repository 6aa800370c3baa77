#!/bin/bash
# bench/startup.sh - start-up cost of `sbx run` against its peers, side by
# side in one run: median wall time of N (default 30) alternating runs of
#
#   sbx run -q --rootfs <cached busybox image> -- /bin/true
#   bwrap --unshare-all --die-with-parent --new-session  (ro image bind,
#         proc, dev, tmpfs /tmp) -- /bin/true
#   unshare -Urmpfnui true
#
# and the ratios sbx/bwrap and sbx/unshare.  sbx does more in that time
# (user namespace with an id map, overlay writable layer, masked /proc,
# capabilities dropped, seccomp, run log and record), so it is the ratio
# that is tracked, never an absolute time.  Two more pairs put equal mounts
# on both sides:
#
#   bwrap-eq  bwrap with the default profile's mounts, as far as bwrap
#             0.8 has them: /tmp, /var/tmp, /run tmpfs, the resolver
#             binds, /sys, $HOME and the working directory bound (bwrap
#             0.8 has no overlay), the masks that exist (on a copy of the
#             image: bwrap creates its mount points in the bound root)
#   sbx-min   sbx with bwrap's mounts: a read-only image root, /proc, /dev,
#             a tmpfs /tmp, no overlay (seccomp, record and run log stay)
#   sbx-rm    sbx --rm (nothing can be kept: the writable layers are a
#             tmpfs in the jail), against bwrap-eq
#
# Usage: bench/startup.sh [N]
#
# Where sbx's time goes (uprobes + sched_switch off-CPU stacks, this
# 2-CPU VM, journal-less ext4 mounted -o discard; medians, ms): loading
# ~1 (6 libraries; libarchive/libcrypto are dlopen()ed only to unpack);
# profile + seccomp compile ~1.2; state dir, image lookup, layer dirs
# ~0.7; clone into new namespaces 1-12 (the network namespace; bwrap pays
# it too); building the root 4-12 (3 overlay mounts ~0.7 ms CPU each, on
# disk; proc/dev/tmpfs/masks; pivot_root's RCU grace period); the command
# ~1; jail teardown ~1.5 (overlays are volatile: no sync of the disk);
# removing the ephemeral state 6-20 (one synchronous discard per freed
# directory block, ~21, done by parallel threads).  The 'running' record
# is fsync'ed by a thread while the jail is built.  The seccomp filters of
# the built-in policies are compiled at build time (lib/seccomp/gen/), and a cached
# image is not walked before the command starts.
#
# On a journal-less ext4 (this VM's), a run creates and deletes ~37 inodes
# in the state directory (sbx's ~17: sandbox directory, record, logs, layer
# directories; the kernel's ~7 per overlay mount: work/work, the volatile
# marker, its tmpfile and whiteout probes).  ext4 without a journal does
# not reuse an inode freed in the last minutes, and each allocation skips
# the recently freed ones of its block group one by one (perf:
# ovl_fill_super -> ext4's recently_deleted / find_get_block_common).  With
# every sandbox in its parent's group, start-up grew over a few hundred
# runs in a row (7.5 -> 11 ms; 100 runs 2 at a time: 1130 ms).  sbx now
# gives STATE/sandboxes ext4's top-directory flag (chattr +T), so each
# sandbox lands in a group of its own and start-up stays flat (7.1-8.0 ms
# over 600 runs; 100 runs 2 at a time: 548 ms).  bwrap's binds allocate
# none.  Compare runs made at the same point, as this script does by
# alternating.
set -eu
N=${1:-30}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$ROOT/sbx}
command -v bwrap >/dev/null || { echo "bench: bwrap missing (apt-get install bubblewrap)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export SBX_STATE_DIR=$TMP/state SBX_CACHE_DIR=$TMP/cache
"$ROOT/tests/lib/mkrootfs.sh" "$TMP/busybox.tar.gz"
mkdir -p "$TMP/wd"
cd "$TMP/wd"
# Unpack once into the cache; the record says where the image is.
"$SBX" run -q --keep --name bench --rootfs "$TMP/busybox.tar.gz" -- /bin/true
IMG=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rootfs"]["dir"])' \
	"$SBX_STATE_DIR"/sandboxes/*/record.json)
"$SBX" destroy bench >/dev/null 2>&1 || true
[ -d "$IMG" ] || { echo "bench: no cached image" >&2; exit 1; }

cat >"$TMP/min.ini" <<'INI'
# bwrap's mounts: a read-only image root, /proc, /dev, a tmpfs /tmp
[sandbox]
writable = no
[filesystem]
tmpfs = /tmp
INI
cp -a "$IMG" "$TMP/bwimg"
python3 - "$N" "$SBX" "$TMP/busybox.tar.gz" "$IMG" "$TMP/bwimg" "$TMP/min.ini" \
	"$ROOT/profiles/default.ini" <<'PY'
import os, statistics, subprocess, sys, time
n, sbx, tarball, img, bwimg, minini, defini = int(sys.argv[1]), *sys.argv[2:]
home, cwd = os.environ["HOME"], os.getcwd()
# bwrap with the default profile's mounts, mount points made in its copy
eq = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
      "--ro-bind", bwimg, "/", "--proc", "/proc", "--dev", "/dev", "--ro-bind", "/sys", "/sys",
      "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
for d in ("/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager"):
    eq += ["--ro-bind-try", d, d]
for d in (home, cwd):
    os.makedirs(bwimg + d, exist_ok=True)
    eq += ["--bind", d, d]
for line in open(defini):
    if line.startswith("mask = ~/"):
        p = os.path.join(home, line.split("~/", 1)[1].strip())
        if os.path.isdir(p):
            eq += ["--tmpfs", p]
        elif os.path.exists(p):
            eq += ["--ro-bind", "/dev/null", p]
eq += ["--", "/bin/true"]
peers = {
    "sbx": [sbx, "run", "-q", "--rootfs", tarball, "--", "/bin/true"],
    "sbx-min": [sbx, "run", "-q", "-p", minini, "--rootfs", tarball, "--", "/bin/true"],
    # a run that cannot be kept: its writable layers in memory
    "sbx-rm": [sbx, "run", "-q", "--rm", "--rootfs", tarball, "--", "/bin/true"],
    "bwrap-eq": eq,
    "bwrap": ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
              "--ro-bind", img, "/", "--proc", "/proc", "--dev", "/dev",
              "--tmpfs", "/tmp", "--", "/bin/true"],
    "unshare": ["unshare", "-Urmpfnui", "true"],
    # not a peer: what loading the sbx binary alone costs (its libraries)
    "sbx-load": [sbx, "--version"],
}
times = {k: [] for k in peers}
for k, cmd in list(peers.items()):      # warm-up, and each must work
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode == 0:
        continue
    if k not in ("bwrap-eq", "sbx-min"):
        sys.exit(f"bench: {k} failed with {r.returncode}: {r.stderr.strip()}")
    print(f"bench: {k} left out: it failed with {r.returncode}: {r.stderr.strip()}")
    del peers[k]
for i in range(n):                       # alternating, so drift hits all
    for k, cmd in peers.items():
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        times[k].append((time.perf_counter() - t) * 1000)
        if r.returncode != 0:
            sys.exit(f"bench: {k} failed with {r.returncode}")
med = {k: statistics.median(v) for k, v in times.items()}
for k, cmd in peers.items():
    print(f"{k:8s} median {med[k]:7.2f} ms  ({n} runs)  {' '.join(cmd)}")
print(f"ratio sbx/bwrap   {med['sbx'] / med['bwrap']:.2f}  (target <= 1.0)")
print(f"ratio sbx/unshare {med['sbx'] / med['unshare']:.2f}")
if "bwrap-eq" in med:
    print(f"ratio sbx/bwrap-eq {med['sbx'] / med['bwrap-eq']:.2f}  (both with the default profile's mounts)")
if "sbx-min" in med:
    print(f"ratio sbx-min/bwrap {med['sbx-min'] / med['bwrap']:.2f}  (both with bwrap's mounts)")
print(f"ratio sbx-rm/bwrap-eq {med['sbx-rm'] / med.get('bwrap-eq', med['bwrap']):.2f}  (--rm: layers in memory; the default profile's mounts)")
print(f"ratio sbx-rm/bwrap {med['sbx-rm'] / med['bwrap']:.2f}")
print(f"of which loading the binary (sbx --version): {med['sbx-load']:.2f} ms")
PY
