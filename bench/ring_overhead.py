#!/usr/bin/env python3
"""Per-fire cost of `-x bufpolicy=ring` (the postmortem flight recorder) against the
default `switch` policy, with and without `-x ringpin`, in one run.

This is a benchmark, not a test. It needs root, gcc with <sys/sdt.h> (Debian package
systemtap-sdt-dev) and a built `target/release/dtrace` (`cargo build --release -p dtrace`).
A missing tool is an error, never a silent skip.

The workload is a C program that fires one USDT probe `bench:::hit` (two integer
arguments) N times in a loop and reports the loop's own wall time, so start-up and
attach costs are excluded. Every traced configuration runs the same clause, which writes
one record per fire:

    bench$target:::hit { trace(arg0); }

  untraced         the program alone
  switch           dtrace -q ... -c PROG             (every record printed, to /dev/null)
  ring             dtrace -q -x bufpolicy=ring ...   (each CPU keeps its latest records)
  ring, pinned     ... -x bufpolicy=ring -x ringpin=bench (the ring also kept in the
                   pinned map: the consumer frees only what is past half the buffer)
  switch, 1s       ... -x switchrate=1sec                (illumos DTrace's default rate)

`--before PATH` also runs every traced configuration with another `dtrace` binary (say,
one built before a change), rows marked "(before)", interleaved with the others.

The in-kernel program is the same in all three: the policy is the consumer's. What can
differ per fire is what the consumer costs the traced CPU (the machine has 2) and the
drops when the ring buffer is full (reported per configuration: the records the kernel
could not write, from dtrace's drop messages). `--gap` makes the loop sleep 1 µs every
1000 fires (a less saturated workload).

Usage: python3 bench/ring_overhead.py [--fires 1000000] [--runs 5] [--dtrace PATH]
                                      [--before PATH] [--gap]
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
#include <sys/sdt.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int gap = argc > 2 && atoi(argv[2]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        DTRACE_PROBE2(bench, hit, i, n);
        if (gap && i % 1000 == 0)
            usleep(1);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("LOOP_NS %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
"""

CLAUSE = "bench$target:::hit { trace(arg0); }"


def run(argv):
    """Run argv; the LOOP_NS the workload printed and the drops dtrace reported."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"LOOP_NS (\d+)", out.stdout)
    if out.returncode != 0 or not m:
        die("run failed: %s\nstdout: %s\nstderr: %s" % (" ".join(argv), out.stdout[-2000:],
                                                       out.stderr[-2000:]), 1)
    drops = sum(int(d) for d in re.findall(r"dtrace: (\d+) drops? on CPU", out.stderr))
    return int(m.group(1)), drops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fires", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gap", action="store_true")
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--before", help="another dtrace binary to run the same configurations")
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("must run as root (dtrace loads BPF programs)")
    for binary in [args.dtrace] + ([args.before] if args.before else []):
        if not os.path.exists(binary):
            die("no dtrace at %s: run cargo build --release -p dtrace" % binary)
    work = tempfile.mkdtemp(prefix="ring-bench-")
    prog = build_c(work, "hit", PROGRAM)
    # The workload's LOOP_NS line goes to its stdout, which is dtrace's stdout too; the
    # records go to /dev/null through -o.
    cmd = "%s %d %d" % (prog, args.fires, int(args.gap))
    traced = [
        ("switch", []),
        ("switch, 1s", ["-x", "switchrate=1sec"]),
        ("ring", ["-x", "bufpolicy=ring"]),
        ("ring, pinned", ["-x", "bufpolicy=ring", "-x", "ringpin=bench"]),
    ]
    binaries = [("", args.dtrace)] + ([(" (before)", args.before)] if args.before else [])
    configs = [("untraced", [prog, str(args.fires), str(int(args.gap))])]
    for mark, binary in binaries:
        for name, options in traced:
            argv = [binary] + options + ["-q", "-o", "/dev/null", "-n", CLAUSE, "-c", cmd]
            configs.append((name + mark, argv))
    samples = {name: [] for name, _ in configs}
    drops = {name: [] for name, _ in configs}
    for r in range(args.runs):
        order = configs if r % 2 == 0 else list(reversed(configs))
        for name, argv in order:
            ns, d = run(["setarch", "-R"] + argv)
            samples[name].append(ns)
            drops[name].append(d)
            print("run %d %s: %d ns, %d drops" % (r, name, ns, d), file=sys.stderr)
    base = statistics.median(samples["untraced"])
    print("| configuration | loop median (ms) | extra ns per fire, median | best | drops (median) |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in configs:
        med = statistics.median(samples[name])
        print("| %s | %.1f | %.1f | %.1f | %d |" % (
            name, med / 1e6, (med - base) / args.fires,
            (min(samples[name]) - base) / args.fires, statistics.median(drops[name])))
    print()
    print("%d fires per run%s, %d runs each; extra = traced minus untraced (median)." % (
        args.fires, " (1 us sleep every 1000)" if args.gap else "", args.runs))


if __name__ == "__main__":
    main()
