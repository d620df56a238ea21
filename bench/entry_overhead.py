#!/usr/bin/env python3
"""Per-fire cost of `entry->` (a return probe reading its entry's state) against the
`self->` idiom that does the same by hand, on a `pid` function and on a system call.

This is a benchmark, not a test. It needs root, gcc and a built `target/release/dtrace`
(`cargo build --release -p dtrace`). A missing tool is an error, never a silent skip.

The workload is a C program that calls `f(i)` (a function that is not inlined) N times
and then `getppid()` N times, and reports each loop's own wall time, so start-up and
attach costs are excluded. Cost per call is (traced loop time - untraced loop time) / N.

Configurations, each run --runs times, interleaved (every one under `setarch -R`, as
bench/usdt_overhead.py explains):

  untraced        the program alone
  return only     a count on the return probe alone (no entry probe)
  self-> idiom    entry { self->ts = timestamp; } return /self->ts/ { @ = sum(timestamp -
                  self->ts); self->ts = 0; }
  entry->         return { @ = sum(timestamp - entry->timestamp); }

Usage: python3 bench/entry_overhead.py [--calls 200000] [--runs 5] [--dtrace PATH]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from usdt_overhead import die, build_c

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noipa)) long f(long i) { return i * 3; }

static long long now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000, s = 0;
    long long a = now();
    for (long i = 0; i < n; i++)
        s += f(i);
    long long b = now();
    for (long i = 0; i < n; i++)
        s += getppid();
    long long c = now();
    printf("PID_NS %lld SYSCALL_NS %lld (%ld)\n", b - a, c - b, s);
    return 0;
}
"""

SCRIPTS = {
    "return only": (
        "pid$target::f:return { @ = count(); }",
        "syscall::getppid:return /pid == $target/ { @ = count(); }",
    ),
    "self-> idiom": (
        "pid$target::f:entry { self->ts = timestamp; } "
        "pid$target::f:return /self->ts/ { @ = sum(timestamp - self->ts); self->ts = 0; }",
        "syscall::getppid:entry /pid == $target/ { self->ts = timestamp; } "
        "syscall::getppid:return /self->ts/ { @ = sum(timestamp - self->ts); self->ts = 0; }",
    ),
    "entry->": (
        "pid$target::f:return { @ = sum(timestamp - entry->timestamp); }",
        "syscall::getppid:return /pid == $target/ { @ = sum(timestamp - entry->timestamp); }",
    ),
}


def loop_ns(argv):
    """Run argv; return the (pid loop, syscall loop) times the workload printed."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"PID_NS (\d+) SYSCALL_NS (\d+)", out.stdout)
    if out.returncode != 0 or not m:
        die("run failed: %s\nstdout: %s\nstderr: %s" % (" ".join(argv), out.stdout, out.stderr), 1)
    return int(m.group(1)), int(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("must run as root (dtrace loads BPF programs)")
    if not os.path.exists(args.dtrace):
        die("no dtrace at %s: run cargo build --release -p dtrace" % args.dtrace)
    work = tempfile.mkdtemp(prefix="entry-bench-")
    prog = build_c(work, "calls", PROGRAM)
    cmd = "%s %d" % (prog, args.calls)
    configs = [("untraced", [prog, str(args.calls)])]
    for name, (pid_script, syscall_script) in SCRIPTS.items():
        script = pid_script + " " + syscall_script
        configs.append((name, [args.dtrace, "-q", "-n", script, "-c", cmd]))
    samples = {name: [] for name, _ in configs}
    for r in range(args.runs):
        order = configs if r % 2 == 0 else list(reversed(configs))
        for name, argv in order:
            samples[name].append(loop_ns(["setarch", "-R"] + argv))
            print("run %d %s: %s ns" % (r, name, samples[name][-1]), file=sys.stderr)
    base = [statistics.median(s[i] for s in samples["untraced"]) for i in (0, 1)]
    print("| configuration | pid: ns per call | pid: extra ns | syscall: ns per call | syscall: extra ns |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in configs:
        med = [statistics.median(s[i] for s in samples[name]) for i in (0, 1)]
        print("| %s | %.1f | %.1f | %.1f | %.1f |" % (
            name, med[0] / args.calls, (med[0] - base[0]) / args.calls,
            med[1] / args.calls, (med[1] - base[1]) / args.calls))
    print()
    print("%d calls per loop, %d runs each, medians; extra = traced minus untraced." % (args.calls, args.runs))


if __name__ == "__main__":
    main()
