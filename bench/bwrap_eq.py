#!/usr/bin/env python3
"""bench/bwrap_eq.py - "bwrap-eq" in make bench: bwrap given the mounts of
sbx's default profile (profiles/default.ini), so that the default profile's
start-up and throughput are also compared with a bwrap doing the same
work: the image read-only, /proc, /dev, /sys read-only, tmpfs /tmp,
/var/tmp and /run, the resolver directories bound back, the home and the
working directory bound (sbx makes them copy-on-write: bwrap has no such
mount), and the profile's masks of the home's credential stores.

  bwrap_eq.py BWIMG DEFAULT_INI COMMAND...   prints the bwrap command line

BWIMG is a copy of the image, where the mount points of the home and the
working directory are made (bwrap cannot make them in a read-only root).
"""
import os
import shlex
import sys


def argv(bwimg, defini, home, cwd, cmd):
    a = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
         "--ro-bind", bwimg, "/", "--proc", "/proc", "--dev", "/dev", "--ro-bind", "/sys", "/sys",
         "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
    for d in ("/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager"):
        a += ["--ro-bind-try", d, d]
    for d in (home, cwd):
        os.makedirs(bwimg + d, exist_ok=True)
        a += ["--bind", d, d]
    for line in open(defini):
        if line.startswith("mask = ~/"):
            p = os.path.join(home, line.split("~/", 1)[1].strip())
            if os.path.isdir(p):
                a += ["--tmpfs", p]
            elif os.path.exists(p):
                a += ["--ro-bind", "/dev/null", p]
    return a + ["--"] + cmd


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: bwrap_eq.py BWIMG DEFAULT_INI COMMAND...")
    print(shlex.join(argv(sys.argv[1], sys.argv[2], os.environ["HOME"], os.getcwd(),
                          sys.argv[3:])))
