#!/bin/bash
# bench/startup.sh - start-up cost of `sbx run` against its peers, side by
# side in one run: median wall time of N (default 30) alternating runs of
#
#   sbx run -q --rootfs <cached busybox image> -- /bin/true
#   bwrap --unshare-all --die-with-parent --new-session  (ro image bind,
#         proc, dev, tmpfs /tmp) -- /bin/true
#   unshare -Urmpfnui true
#   podman run --rm --network none --runtime runc (the tarball imported)
#   firejail --noprofile --net=none (host root), systemd-nspawn -D (a copy
#         of the image, --register=no --keep-unit): as root, where they run
#
# and the ratios of sbx (default profile) and sbx-min (a minimal one) to
# each.  sbx does more in that time
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
#             a tmpfs /tmp, no overlay, no sysfs (sysfs = none: an empty
#             read-only /sys); seccomp, record and run log stay
#   sbx-rm    sbx --rm (nothing can be kept: the writable layers are a
#             tmpfs in the jail), against bwrap-eq
#
# Then the same commands once more, alternating, with bench/execstamp (a
# static binary added to the image) as the command instead of /bin/true:
# time to exec, from just before the runner is spawned to the realtime
# clock the command reads as its first work (what removal after the run
# cannot touch).
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
#
# As root the layers' cap is an ext4 image on a loop device, and what that
# cost a run was mostly waiting (perf trace and sched_switch stacks, this
# VM; each figure before -> after the change that took it off the path):
# LOOP_CONFIGURE syncs its backing file, which for a fresh copy of the
# template meant writing the copy, its inode and the new sandbox directory
# above it, then a cache flush: 1.5 -> 0.3 ms (the flush alone) with a copy
# the previous run's purger made and synced, attached where it lies and only
# then renamed into the sandbox; the mount and the first directories read
# the superblock, descriptors, bitmaps and root inode block one loop request
# at a time: mount 1.0-1.5 -> 0.3-0.7 ms, first rmdir/mkdir 0.8-1.0 ->
# 0.1-0.3 ms with those pieces read ahead and the layout's top directories
# made by mke2fs next to the root; the flushes at mount and unmount
# (umount 1.7 -> 0.6 ms) went with nobarrier.  A new directory in
# STATE/sandboxes (top-directory flag: a group of its own, bitmaps read
# from the disk) cost 0.8 ms median: the purger makes two ahead.  The
# purger's work still competes in the 2-at-a-time throughput line.
set -eu
N=${1:-30}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$ROOT/sbx}
command -v bwrap >/dev/null || { echo "bench: bwrap missing (apt-get install bubblewrap)" >&2; exit 1; }
TMP=$(mktemp -d)
chmod 0755 "$TMP"
PODIMG=sbx-bench-busybox-$$
trap 'rm -rf "$TMP"; [ "$(id -u)" != 0 ] || podman rmi -f "$PODIMG" >/dev/null 2>&1 || true' EXIT
export SBX_STATE_DIR=$TMP/state SBX_CACHE_DIR=$TMP/cache
# The busybox rootfs plus /execstamp (the time-to-exec command).
mkdir "$TMP/rootfs"
"$ROOT/tests/lib/mkrootfs.sh" "$TMP/busybox0.tar.gz"
tar -xzf "$TMP/busybox0.tar.gz" -C "$TMP/rootfs"
gcc -static -O2 -o "$TMP/rootfs/execstamp" "$ROOT/bench/execstamp.c"
tar -czf "$TMP/busybox.tar.gz" --numeric-owner -C "$TMP/rootfs" .
chmod 0644 "$TMP/busybox.tar.gz"
mkdir -p "$TMP/wd"
chmod 0777 "$TMP/wd"
cd "$TMP/wd"
# Unpack once into the cache; the record says where the image is.
"$SBX" run -q --keep --name bench --rootfs "$TMP/busybox.tar.gz" -- /bin/true
IMG=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rootfs"]["dir"])' \
	"$SBX_STATE_DIR"/sandboxes/*/record.json)
"$SBX" destroy bench >/dev/null 2>&1 || true
[ -d "$IMG" ] || { echo "bench: no cached image" >&2; exit 1; }

cp -a "$IMG" "$TMP/bwimg"
cp -a "$IMG" "$TMP/nsimg"
# podman: the same tarball imported (root only: rootless podman needs a
# subordinate id range and a home for the user)
PODMAN=
if [ "$(id -u)" = 0 ] && command -v podman >/dev/null &&
	podman import "$TMP/busybox.tar.gz" "$PODIMG" >/dev/null 2>"$TMP/podman.err"; then
	PODMAN=$PODIMG
fi
python3 - "$N" "$SBX" "$TMP/busybox.tar.gz" "$IMG" "$TMP/bwimg" "$ROOT/bench/minimal.ini" \
	"$ROOT/profiles/default.ini" "$TMP/nsimg" "$PODMAN" "$TMP/rootfs/execstamp" <<'PY'
import os, shutil, statistics, subprocess, sys, time
n, sbx, tarball, img, bwimg, minini, defini, nsimg, podimg, stamp = int(sys.argv[1]), *sys.argv[2:]
home, cwd = os.environ["HOME"], os.getcwd()
root = os.geteuid() == 0
# Each peer is a function of the command to run in it (an absolute path in
# the image; the host-root peers run the host's copy).
sys.path.insert(0, os.path.dirname(minini))   # bench/: bwrap_eq.py
from bwrap_eq import argv as bwrap_eq
def eq(c):    # bwrap with the default profile's mounts, mount points made in its copy
    return bwrap_eq(bwimg, defini, home, cwd, [c])
hoststamp = stamp  # the host-root peers run the binary where it was built
peers = {
    "sbx": lambda c: [sbx, "run", "-q", "--rootfs", tarball, "--", c],
    "sbx-min": lambda c: [sbx, "run", "-q", "-p", minini, "--rootfs", tarball, "--", c],
    # a run that cannot be kept: its writable layers in memory
    "sbx-rm": lambda c: [sbx, "run", "-q", "--rm", "--rootfs", tarball, "--", c],
    "bwrap-eq": eq,
    "bwrap": lambda c: ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
                        "--ro-bind", img, "/", "--proc", "/proc", "--dev", "/dev",
                        "--tmpfs", "/tmp", "--", c],
    "unshare": lambda c: ["unshare", "-Urmpfnui", "/bin/true" if c == "/bin/true" else hoststamp],
}
missing = []
if podimg:
    # crun refuses this kind of host's hybrid cgroup v1: runc; podman's
    # default rlimits exceed the hard limits here, so they are set
    peers["podman"] = lambda c: ["podman", "run", "--rm", "--network", "none", "--runtime", "runc",
                                 "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
                                 podimg, c]
else:
    missing.append("podman (root only, with podman installed)")
if root and shutil.which("firejail"):
    peers["firejail"] = lambda c: ["firejail", "--quiet", "--noprofile", "--net=none",
                                   "/bin/true" if c == "/bin/true" else hoststamp]
else:
    missing.append("firejail (root only here: firejail.users; apt-get install firejail)")
if root and shutil.which("systemd-nspawn"):
    peers["nspawn"] = lambda c: ["systemd-nspawn", "-q", "--register=no", "--keep-unit",
                                 "-D", nsimg, c]
else:
    missing.append("systemd-nspawn (root only; apt-get install systemd-container)")
# not a peer: what loading the sbx binary alone costs (its libraries)
peers["sbx-load"] = lambda c: [sbx, "--version"]
optional = ("bwrap-eq", "sbx-min", "podman", "firejail", "nspawn")
for k, f in list(peers.items()):         # warm-up, and each must work
    r = subprocess.run(f("/bin/true"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode == 0:
        continue
    if k not in optional:
        sys.exit(f"bench: {k} failed with {r.returncode}: {r.stderr.strip()}")
    print(f"bench: {k} left out: it failed with {r.returncode}: {r.stderr.strip()[-300:]}")
    del peers[k]
for m in missing:
    print(f"bench: not measured: {m}")

def rounds(cmd_of, measure):
    t = {k: [] for k in peers}
    names = list(peers)
    for i in range(n):                   # alternating, rotating, so drift hits all
        for k in names[i % len(names):] + names[:i % len(names)]:
            t[k].append(measure(k, cmd_of(k)))
    return {k: statistics.median(v) for k, v in t.items()}

def wall(k, cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        sys.exit(f"bench: {k} failed with {r.returncode}")
    return d

def to_exec(k, cmd):
    t = time.time_ns()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        sys.exit(f"bench: {k} (time to exec) failed with {r.returncode}: {r.stdout!r}")
    return (int(r.stdout.strip().splitlines()[-1]) - t) / 1e6

med = rounds(lambda k: peers[k]("/bin/true"), wall)
for k, f in peers.items():
    print(f"{k:8s} median {med[k]:7.2f} ms  ({n} runs)  {' '.join(f('/bin/true'))}")
def ratio(a, b, what=""):
    if a in med and b in med:
        print(f"ratio {a}/{b} {med[a] / med[b]:.2f}{what}")
ratio("sbx", "bwrap", "  (sbx's default profile, bwrap minimal)")
ratio("sbx", "bwrap-eq", "  (both with the default profile's mounts)")
ratio("sbx-min", "bwrap", "  (both with bwrap's mounts)")
ratio("sbx-rm", "bwrap-eq", "  (--rm: layers in memory; the default profile's mounts)")
ratio("sbx-rm", "bwrap")
for p in ("unshare", "podman", "firejail", "nspawn"):
    ratio("sbx", p)
    ratio("sbx-min", p)
print(f"of which loading the binary (sbx --version): {med['sbx-load']:.2f} ms")

del peers["sbx-load"]
tx = rounds(lambda k: peers[k]("/execstamp"), to_exec)
for k, f in peers.items():
    print(f"{k:8s} exec   {tx[k]:7.2f} ms  ({n} runs)  {' '.join(f('/execstamp'))}")
for a, b in (("sbx", "bwrap-eq"), ("sbx", "bwrap"), ("sbx-min", "bwrap"), ("sbx-rm", "bwrap-eq"),
             ("sbx", "unshare"), ("sbx", "podman"), ("sbx", "firejail"), ("sbx", "nspawn")):
    if a in tx and b in tx:
        print(f"exec-ratio {a}/{b} {tx[a] / tx[b]:.2f}")
PY
