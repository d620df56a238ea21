#!/usr/bin/env python3
"""Per-fire overhead of a USDT probe: untraced, traced by our `dtrace`, and traced by
`bpftrace`, with the same counting script, in one run.

This is a benchmark, not a test. It needs root, gcc with <sys/sdt.h> (Debian package
systemtap-sdt-dev), `bpftrace` on PATH and a built `target/release/dtrace`
(`cargo build --release -p dtrace`). A missing tool is an error, never a silent skip.

The workload is a C program that fires one USDT probe `bench:::hit` (two integer
arguments) N times in a tight loop and reports the loop's own wall time, so start-up and
attach costs of the tracers are excluded. Cost per fire is
(traced loop time - untraced loop time) / N.

Configurations, each run --runs times, interleaved:

  untraced              the program alone
  dtrace count          dtrace -qn 'bench$target:::hit { @ = count(); }' -c PROG
                        (a pid is named and the probe has one site: a per-process
                        perf-event uprobe)
  dtrace count, by path dtrace -qn 'bench*:PROG::hit { @ = count(); }' -c PROG
                        (system-wide: a uprobe_multi link without a pid)
  bpftrace count        bpftrace -e 'usdt:PROG:bench:hit { @ = count(); }' -c PROG
  bpftrace empty        bpftrace -e 'usdt:PROG:bench:hit { }' -c PROG   (the uprobe floor:
                        an empty program on the same probe)

Every configuration runs under `setarch -R` (no address-space randomisation): with it,
the per-fire cost of a uprobe on this VM is bimodal from run to run (≈ 460 or ≈ 680 ns,
depending on where the stack and the uprobe trampoline page land), whatever the tracer.
There is no "dtrace empty" row: an empty D clause is not an empty program (it records
the probe's default trace output on every fire).

Usage: python3 bench/usdt_overhead.py [--fires 2000000] [--runs 5] [--dtrace PATH]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/sdt.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        DTRACE_PROBE2(bench, hit, i, n);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("LOOP_NS %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
"""


def die(msg, code=2):
    print("bench/usdt_overhead.py: error: " + msg, file=sys.stderr)
    sys.exit(code)


def loop_ns(argv):
    """Run argv; return the LOOP_NS the workload printed."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"LOOP_NS (\d+)", out.stdout)
    if out.returncode != 0 or not m:
        die("run failed: %s\nstdout: %s\nstderr: %s" % (" ".join(argv), out.stdout, out.stderr), 1)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fires", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("must run as root (the tracers load BPF programs)")
    if not os.path.exists(args.dtrace):
        die("no dtrace at %s: run cargo build --release -p dtrace" % args.dtrace)
    if not args.bpftrace:
        die("bpftrace not found: apt-get install bpftrace")
    work = tempfile.mkdtemp(prefix="usdt-bench-")
    src = os.path.join(work, "hit.c")
    prog = os.path.join(work, "hit")
    with open(src, "w") as f:
        f.write(PROGRAM)
    cc = subprocess.run(["gcc", "-O2", "-o", prog, src], capture_output=True, text=True)
    if cc.returncode != 0:
        die("gcc failed (is systemtap-sdt-dev installed?):\n" + cc.stderr)
    cmd = "%s %d" % (prog, args.fires)
    configs = [
        ("untraced", [prog, str(args.fires)]),
        ("dtrace count", [args.dtrace, "-q", "-n", "bench$target:::hit { @ = count(); }", "-c", cmd]),
        ("dtrace count, by path",
         [args.dtrace, "-q", "-n", "bench*:%s::hit { @ = count(); }" % prog, "-c", cmd]),
        ("bpftrace count", [args.bpftrace, "-e", "usdt:%s:bench:hit { @ = count(); }" % prog, "-c", cmd]),
        ("bpftrace empty", [args.bpftrace, "-e", "usdt:%s:bench:hit { }" % prog, "-c", cmd]),
    ]
    samples = {name: [] for name, _ in configs}
    for r in range(args.runs):
        order = configs if r % 2 == 0 else list(reversed(configs))
        for name, argv in order:
            samples[name].append(loop_ns(["setarch", "-R"] + argv))
            print("run %d %s: %d ns" % (r, name, samples[name][-1]), file=sys.stderr)
    base = statistics.median(samples["untraced"])
    print("| configuration | loop median (ms) | ns per fire | extra ns per fire |")
    print("|---|---:|---:|---:|")
    for name, _ in configs:
        med = statistics.median(samples[name])
        print("| %s | %.1f | %.1f | %.1f |" % (
            name, med / 1e6, med / args.fires, (med - base) / args.fires))
    print()
    print("%d fires per run, %d runs each, medians; extra = traced minus untraced." % (args.fires, args.runs))


if __name__ == "__main__":
    main()
