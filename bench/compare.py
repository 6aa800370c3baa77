#!/usr/bin/env python3
"""bench/compare.py - run commands side by side, alternating, and print
the ratio of the first (sbx) to each of the others (its peers).

  compare.py [--runs N] [--batch K --parallel P] [--rss SECONDS]
             --label LABEL [--target PEER=OP:VALUE ...] [--vs NAME] [--pair A/B ...]
             [--setup NAME=COMMAND ...] NAME=COMMAND NAME=COMMAND ...

COMMAND is a shell-quoted command line (split with shlex, run without a
shell).  Every command runs once first (warm-up; each must exit 0), then
N rounds (default 21), each round running every command once in turn,
the order rotating from round to round so drift hits all alike.  What is
measured per run:

  default      wall time of the command
  --batch K    wall time of K runs of the command, P at a time
  --rss S      the peak RSS (VmHWM of /proc/PID/status) of the process we
               started, read S seconds after the start while the command
               (e.g. one that sleeps) still runs

A --setup command of NAME runs (untimed, through sh -c) before each run
of NAME, e.g. to empty a cache or remove an output directory.  The
medians are compared: ratio = median(first) / median(peer).
With --vs NAME, the ratio of every other command to NAME instead; each
--pair A/B adds the ratio of A to B (from the same runs; B, a peer of A
only, gets no --vs ratio of its own).
A target "bwrap=<=:1.0" (the peer's name; with --vs, the measured one's;
for a --pair, "A/B") is printed next to that ratio with ok or MISSED.
The last lines are machine-readable, one per peer:

  RESULT<TAB>LABEL<TAB>FIRST/PEER<TAB>RATIO<TAB>TARGET<TAB>VERDICT<TAB>MEDIANS<TAB>PEER COMMAND
"""
import argparse
import os
import select
import shlex
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


class Stopped(Exception):
    """A process of ours was found stopped (SIGSTOP from outside) and
    continued: the sample is worthless and is measured again."""


def descendants(pid):
    kids, out = {}, []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read().rsplit(")", 1)[1].split()
                kids.setdefault(int(st[1]), []).append((int(d), st[0]))
            except (OSError, IndexError):
                pass
    todo = [pid]
    while todo:
        p = todo.pop()
        for c, state in kids.get(p, []):
            out.append((c, state))
            todo.append(c)
    return out


def wait_guarded(proc):
    """proc.wait(), but a process tree stopped by someone else's SIGSTOP
    (seen on a shared machine: a ptrace-based test on the host attaching to
    new processes) is continued, and the sample raises Stopped.

    The exit is awaited on a pidfd with poll(2), which wakes the moment the
    process ends.  (Popen.wait(timeout=...) polls with sleeps of 1, 2, 4,
    8 ms...: a run that ended at 7.2 ms was seen at ~15 ms, which made the
    medians of any command near 7 ms jump between two values.)"""
    stopped = False
    fd = os.pidfd_open(proc.pid)
    try:
        p = select.poll()
        p.register(fd, select.POLLIN)
        while not p.poll(15000):
            try:
                with open(f"/proc/{proc.pid}/stat") as f:
                    me = [(proc.pid, f.read().rsplit(")", 1)[1].split()[0])]
            except OSError:
                me = []
            for pid, state in me + descendants(proc.pid):
                if state in ("T", "t"):
                    print(f"compare: pid {pid} was stopped from outside; continued, "
                          "sample discarded", file=sys.stderr)
                    os.kill(pid, signal.SIGCONT)
                    stopped = True
    finally:
        os.close(fd)
    rc = proc.wait()
    if stopped:
        raise Stopped()
    return rc


def run_once(cmd):
    return wait_guarded(subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL))


def time_once(cmd):
    t = time.perf_counter()
    rc = run_once(cmd)
    return (time.perf_counter() - t) * 1000.0, rc


def time_batch(cmd, k, p):
    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=p) as ex:
        rcs = list(ex.map(lambda _: run_once(cmd), range(k)))
    bad = [rc for rc in rcs if rc != 0]
    return (time.perf_counter() - t) * 1000.0, (bad[0] if bad else 0)


def vmhwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def rss_once(cmd, after):
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    time.sleep(after)
    try:
        hwm = vmhwm_kib(proc.pid)
    except OSError:
        hwm = None
    if proc.poll() is not None:
        hwm = None  # ended too early: not "while the jail runs"
    rc = wait_guarded(proc)
    if hwm is None:
        sys.exit(f"compare: {shlex.join(cmd)} ended before its RSS was read")
    return float(hwm), rc


def parse_target(spec):
    name, _, rest = spec.partition("=")
    op, _, val = rest.partition(":")
    if op not in ("<=", ">=") or not name or not val:
        sys.exit(f"compare: bad --target '{spec}' (PEER=<=:VALUE or PEER=>=:VALUE)")
    return name, (op, float(val))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--rss", type=float, default=0.0)
    ap.add_argument("--label", required=True)
    ap.add_argument("--target", action="append", default=[])
    ap.add_argument("--setup", action="append", default=[])
    ap.add_argument("--vs", default=None)
    ap.add_argument("--pair", action="append", default=[])
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    names, cmds = [], {}
    for spec in a.cmds:
        name, _, cmd = spec.partition("=")
        if not cmd:
            sys.exit(f"compare: '{spec}' is not NAME=COMMAND")
        names.append(name)
        cmds[name] = shlex.split(cmd)
    targets = dict(parse_target(t) for t in a.target)
    extra = [tuple(p.split("/", 1)) for p in a.pair]
    for p in extra:
        if len(p) != 2 or p[0] not in cmds or p[1] not in cmds:
            sys.exit(f"compare: bad --pair '{'/'.join(p)}' (A/B, both named commands)")
    setup = dict(s.split("=", 1) for s in a.setup)

    def prep(n):
        if n in setup:
            rc = wait_guarded(subprocess.Popen(["sh", "-c", setup[n]]))
            if rc != 0:
                sys.exit(f"compare: set-up of {n} failed (exit {rc}): {setup[n]}")

    def sample(n):  # prep, measure; again if a process was stopped from outside
        for _ in range(5):
            try:
                prep(n)
                return measure(cmds[n])
            except Stopped:
                continue
        sys.exit(f"compare: {n} kept being stopped from outside")

    if a.rss:
        measure, unit = (lambda c: rss_once(c, a.rss)), "KiB peak RSS"
    elif a.batch:
        measure, unit = (lambda c: time_batch(c, a.batch, a.parallel)), \
            f"ms for {a.batch} runs, {a.parallel} at a time"
    else:
        measure, unit = time_once, "ms"

    for n in names:  # warm-up; each must work
        _, rc = sample(n)
        if rc != 0:
            sys.exit(f"compare: {n} failed (exit {rc}): {shlex.join(cmds[n])}")
    vals = {n: [] for n in names}
    for i in range(a.runs):
        k = i % len(names)
        for n in names[k:] + names[:k]:
            v, rc = sample(n)
            if rc != 0:
                sys.exit(f"compare: {n} failed (exit {rc}): {shlex.join(cmds[n])}")
            vals[n].append(v)
    med = {n: statistics.median(v) for n, v in vals.items()}
    print(f"== {a.label}  (median of {a.runs} alternating runs, {unit}; uid {os.getuid()})")
    for n in names:
        print(f"  {n:10s} {med[n]:10.2f}  {shlex.join(cmds[n])}")
        if n in setup:
            print(f"  {'':10s} {'':10s}  (before each, untimed: {setup[n]})")
    if a.vs:  # every other command over the one named
        pairs = [(m, a.vs) for m in names if m != a.vs and m not in {p[1] for p in extra}]
    else:     # the first over every other
        pairs = [(names[0], m) for m in names[1:]]
    for first, n in pairs + extra:
        ratio = med[first] / med[n] if med[n] else float("inf")
        tgt, verdict = "", ""
        key = f"{first}/{n}" if (first, n) in extra else first if a.vs else n
        if key in targets:
            op, val = targets[key]
            good = ratio <= val if op == "<=" else ratio >= val
            tgt, verdict = f"{op} {val}", ("ok" if good else "MISSED")
        print(f"  ratio {first}/{n} = {ratio:.2f}" + (f"  (target {tgt}: {verdict})" if tgt else ""))
        print("\t".join(["RESULT", a.label, f"{first}/{n}", f"{ratio:.2f}", tgt or "-",
                         verdict or "-", f"{med[first]:.2f} / {med[n]:.2f} {unit}",
                         shlex.join(cmds[n])]))


if __name__ == "__main__":
    main()
