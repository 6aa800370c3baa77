#!/bin/sh
# tests/escape/hostile_tars.sh BASE.tar OUTDIR HOSTDIR
#
# Write the hostile rootfs tarballs of the escape battery into OUTDIR, each
# a copy of the busybox rootfs BASE.tar (uncompressed) plus the entries of
# one attack class, aimed at HOSTDIR (a host directory the battery watches):
#
#   tar-dotdot.tar        ../../..HOSTDIR/x and a/../../x entries
#   tar-abs.tar           /HOSTDIR/x (absolute name)
#   tar-symlink-file.tar  lnk -> HOSTDIR/tsym, then lnk/pwned (abs and ../..)
#   tar-symlink-dir.tar   d -> HOSTDIR/tsym, then d/ as a directory, d/x
#   tar-symlink-over.tar  f -> HOSTDIR/tfile, then a regular f
#   tar-hardlink.tar      h -> HOSTDIR/tfile and ../..HOSTDIR/tfile (hardlinks),
#                         hs -> a symlink to HOSTDIR/tfile, each then rewritten
#   tar-device.tar        /dev/mem, /dev/kmsg, /evil/sda device entries
#   tar-setuid.tar        /x/suid: setuid/setgid root copy of /x/caps_attack
#   tar-fcap.tar          /x/fcap: caps_attack with a security.capability xattr
#   tar-bomb-header.tar   one entry declaring 1 TiB (no data follows)
#   tar-bomb-gzip.tar.gz  256 MiB of zeros in ~250 KiB of gzip
#   tar-bomb-entries.tar  5000 empty files
#   mnt-*.tar             mount targets that are symlinks to HOSTDIR/mnt/*:
#                         /proc, /dev, /dev/null, /tmp, /sys (absolute), /proc
#                         and /mnt/t (relative ../..), /mnt/t (absolute), /run,
#                         /run/secrets (where file secrets are written),
#                         /etc/resolv.conf, /etc/hosts (what a network mode
#                         may provide) -> HOSTDIR/mnt/nullfile
set -eu
exec /usr/bin/python3 - "$@" <<'PY'
import gzip, io, os, sys, tarfile

base, out, hv = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/")
up = "../" * 12
FCAP = (b"\x01\x00\x00\x02" + b"\xff\xff\xff\xff" + b"\x00" * 4 + b"\xff\xff\xff\xff" + b"\x00" * 4)

def members(skip=()):
    with tarfile.open(base) as t:
        for m in t.getmembers():
            n = m.name.lstrip("./")
            if any(n == s or n.startswith(s + "/") for s in skip):
                continue
            yield m, (t.extractfile(m).read() if m.isfile() else None)

def write(name, extra, skip=(), fmt=tarfile.PAX_FORMAT):
    with tarfile.open(os.path.join(out, name), "w", format=fmt) as t:
        for m, data in members(skip):
            t.addfile(m, io.BytesIO(data) if data is not None else None)
        for e in extra:
            e(t)

def f(name, data=b"pwned\n", mode=0o644, pax=None):
    def add(t):
        i = tarfile.TarInfo(name)
        i.size, i.mode, i.mtime = len(data), mode, 1700000000
        if pax:
            i.pax_headers = pax
        t.addfile(i, io.BytesIO(data))
    return add

def node(name, kind, target="", major=0, minor=0, mode=0o777):
    def add(t):
        i = tarfile.TarInfo(name)
        i.type, i.linkname, i.mode = kind, target, mode
        i.devmajor, i.devminor, i.mtime = major, minor, 1700000000
        t.addfile(i)
    return add

def d(name):
    return node(name, tarfile.DIRTYPE, mode=0o755)

def caps_bin():
    with tarfile.open(base) as t:
        return t.extractfile("./x/caps_attack").read()

write("tar-dotdot.tar", [f(up + hv[1:] + "/tar-dotdot"), f("a/../../tar-dotdot2"),
                         f("../escaped-dotdot"), f("x/" + up + hv[1:] + "/tar-dotdot3")])
write("tar-abs.tar", [f(hv + "/tar-abs"), f("//" + hv + "/tar-abs2")])
write("tar-symlink-file.tar", [node("lnk", tarfile.SYMTYPE, hv + "/tsym"), f("lnk/pwned"),
                               node("lnk2", tarfile.SYMTYPE, up + hv[1:] + "/tsym"),
                               f("lnk2/pwned2")])
write("tar-symlink-dir.tar", [node("dd", tarfile.SYMTYPE, hv + "/tsym"), d("dd"),
                              f("dd/pwned3"), d("dd/sub"), f("dd/sub/pwned4")])
write("tar-symlink-over.tar", [node("f", tarfile.SYMTYPE, hv + "/tfile"),
                               f("f", b"pwned-over\n"),
                               node("g", tarfile.SYMTYPE, hv + "/tfile"),
                               f("g", b"pwned-over\n", mode=0o4755)])
write("tar-hardlink.tar", [node("h", tarfile.LNKTYPE, hv + "/tfile"),
                           f("h", b"pwned-hard\n"),
                           node("h2", tarfile.LNKTYPE, up + hv[1:] + "/tfile"),
                           node("s", tarfile.SYMTYPE, hv + "/tfile"),
                           node("hs", tarfile.LNKTYPE, "s"), f("hs", b"pwned-hard\n"),
                           node("h3", tarfile.LNKTYPE, "/etc/../" + up + hv[1:] + "/tfile")])
write("tar-device.tar", [node("dev/mem", tarfile.CHRTYPE, major=1, minor=1, mode=0o666),
                         node("dev/kmsg", tarfile.CHRTYPE, major=1, minor=11, mode=0o666),
                         d("evil"),
                         node("evil/sda", tarfile.BLKTYPE, major=8, minor=0, mode=0o666),
                         node("evil/mem", tarfile.CHRTYPE, major=1, minor=1, mode=0o666)])
cb = caps_bin()
write("tar-setuid.tar", [f("x/suid", cb, mode=0o6755)])
write("tar-fcap.tar", [f("x/fcap", cb, mode=0o755,
                         pax={"SCHILY.xattr.security.capability": FCAP.decode("utf-8", "surrogateescape")})])

# Bombs: a header that declares 1 TiB and nothing after it ...
with tarfile.open(os.path.join(out, "tar-bomb-header.tar"), "w", format=tarfile.PAX_FORMAT) as t:
    i = tarfile.TarInfo("huge")
    i.size = 1 << 40
    t.fileobj.write(i.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
# ... 256 MiB of zeros, gzip'd ...
with gzip.open(os.path.join(out, "tar-bomb-gzip.tar.gz"), "wb", compresslevel=1) as g:
    i = tarfile.TarInfo("zeros")
    i.size = 256 << 20
    g.write(i.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape"))
    z = bytes(1 << 20)
    for _ in range(256):
        g.write(z)
    g.write(bytes(1024 * 10))
# ... and many entries.
write("tar-bomb-entries.tar", [f("many/%d" % n, b"") for n in range(5000)])

# Mount targets that are symlinks out of the root.
write("mnt-proc-abs.tar", [node("proc", tarfile.SYMTYPE, hv + "/mnt/proc")], skip=("proc",))
write("mnt-proc-rel.tar", [node("proc", tarfile.SYMTYPE, up + hv[1:] + "/mnt/proc")], skip=("proc",))
write("mnt-dev-abs.tar", [node("dev", tarfile.SYMTYPE, hv + "/mnt/dev")], skip=("dev",))
write("mnt-devnull.tar", [d("dev"), node("dev/null", tarfile.SYMTYPE, hv + "/mnt/nullfile"),
                          node("dev/pts", tarfile.SYMTYPE, up + hv[1:] + "/mnt/dev")], skip=("dev",))
# runc CVE-2025-31133 / CVE-2025-52565: the image's /dev/null, /dev/console,
# /dev/ptmx and /dev/pts/ptmx are symlinks to /proc files sbx masks or makes
# read-only (a mask source or a bind target that follows them would write
# there), and /proc holds the same names as symlinks under the mount.
write("cve-dev-symlinks.tar", [d("dev"), d("dev/pts"),
                               node("dev/null", tarfile.SYMTYPE, "/proc/sys/kernel/core_pattern"),
                               node("dev/console", tarfile.SYMTYPE, "/proc/sysrq-trigger"),
                               node("dev/ptmx", tarfile.SYMTYPE, "/proc/sys/kernel/hostname"),
                               node("dev/pts/ptmx", tarfile.SYMTYPE, "../../proc/sysrq-trigger"),
                               node("dev/tty", tarfile.SYMTYPE, "/proc/kcore"),
                               d("proc"),
                               node("proc/kcore", tarfile.SYMTYPE, "/etc/passwd")],
      skip=("dev", "proc"))
write("mnt-tmp-abs.tar", [node("tmp", tarfile.SYMTYPE, hv + "/mnt/tmp")], skip=("tmp",))
write("mnt-sys-abs.tar", [node("sys", tarfile.SYMTYPE, hv + "/mnt/sys")], skip=("sys",))
write("mnt-bind-abs.tar", [d("mnt"), node("mnt/t", tarfile.SYMTYPE, hv + "/mnt/bindt")])
write("mnt-bind-rel.tar", [d("mnt"), node("mnt/t", tarfile.SYMTYPE, up + hv[1:] + "/mnt/bindt")])
write("mnt-bind-parent.tar", [node("mnt", tarfile.SYMTYPE, hv + "/mnt")])
write("mnt-etc-net.tar", [node("etc/resolv.conf", tarfile.SYMTYPE, hv + "/mnt/nullfile"),
                         node("etc/hosts", tarfile.SYMTYPE, up + hv[1:] + "/mnt/nullfile"),
                         node("etc/nsswitch.conf", tarfile.SYMTYPE, hv + "/mnt/nullfile")],
      skip=("etc/resolv.conf", "etc/hosts", "etc/nsswitch.conf"))
write("mnt-run-abs.tar", [node("run", tarfile.SYMTYPE, hv + "/mnt/run")], skip=("run",))
write("mnt-secrets-abs.tar", [d("run"), node("run/secrets", tarfile.SYMTYPE, hv + "/mnt/secrets")],
      skip=("run",))
PY
