#!/usr/bin/env python3
"""Per-syscall cost of system call probes: our `dtrace` against `bpftrace`, in one run.

A benchmark, not a test. Needs root, gcc, `bpftrace` on PATH and a built
`target/release/dtrace`. The workload calls getppid() N times in a loop and prints the
loop's own CPU time (LOOP_NS, as in bench/usdt_overhead.py: the system calls and the BPF
programs they run included, waiting for a CPU excluded), so start-up and attach are
excluded; the cost per call under a
tracer is (traced loop time - untraced loop time) / N. The scripts, side by side:

  one syscall, @ = count()   syscall::getppid:entry { @ = count(); }
                             tracepoint:syscalls:sys_enter_getppid { @ = count(); }
  @[pid]                     ... { @[pid] = count(); }          (both)
  @[execname] / @[comm]      ... { @[execname] = count(); }     ... { @[comm] = count(); }
  every syscall              syscall:::entry { @[probefunc] = count(); }
                             tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }

System call probes are system-wide, so whatever else the machine runs meanwhile is traced
too (not counted in the loop's CPU time).
Every configuration runs --runs times, interleaved, order flipped every round.

With --baseline PATH a second dtrace binary (say, a build of the code before a change)
runs the same scripts in the same rounds, so that before and after share the machine's
conditions; the report gets its column and ratio too.

Usage: python3 bench/syscall_cost.py [--calls 2000000] [--runs 5] [--baseline PATH]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile

import usdt_overhead

REPO = usdt_overhead.REPO

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long i = 0; i < n; i++)
        getppid();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    printf("LOOP_NS %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
"""

ONE = "tracepoint:syscalls:sys_enter_getppid"

# (row, dtrace script, bpftrace script)
SCRIPTS = [
    ("one syscall, `@ = count()`", "syscall::getppid:entry { @ = count(); }",
     ONE + " { @ = count(); }"),
    ("`@[pid] = count()`", "syscall::getppid:entry { @[pid] = count(); }",
     ONE + " { @[pid] = count(); }"),
    ("`@[execname]` / `@[comm]`", "syscall::getppid:entry { @[execname] = count(); }",
     ONE + " { @[comm] = count(); }"),
    ("every syscall: `@[probefunc]` / raw_syscalls `@[args->id]`",
     "syscall:::entry { @[probefunc] = count(); }",
     "tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }"),
]


def measure(dtrace, bpftrace, calls, runs, baseline=None):
    """{row: (untraced ns per call, dtrace extra ns per call, bpftrace extra ns per call,
    baseline dtrace's extra ns per call or None)}."""
    work = tempfile.mkdtemp(prefix="syscall-bench-")
    prog = usdt_overhead.build_c(work, "getppid", PROGRAM)
    cmd = "%s %d" % (prog, calls)
    configs = [("untraced", [prog, str(calls)])]
    for row, d, b in SCRIPTS:
        configs.append(((row, "dtrace"), [dtrace, "-q", "-n", d, "-c", cmd]))
        configs.append(((row, "bpftrace"), [bpftrace, "-e", b, "-c", cmd]))
        if baseline:
            configs.append(((row, "baseline"), [baseline, "-q", "-n", d, "-c", cmd]))
    samples = {name: [] for name, _ in configs}
    for r in range(runs):
        for name, argv in (configs if r % 2 == 0 else list(reversed(configs))):
            samples[name].append(usdt_overhead.loop_ns(argv))
            print("run %d %s: %d ns" % (r, name, samples[name][-1]), file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(samples["untraced"]) / calls

    def extra(row, tool):
        return statistics.median(samples[(row, tool)]) / calls - base
    return {row: (base, extra(row, "dtrace"), extra(row, "bpftrace"),
                  extra(row, "baseline") if baseline else None)
            for row, _, _ in SCRIPTS}


def report(result, calls, runs):
    with_baseline = any(r[3] is not None for r in result.values())
    if with_baseline:
        print("| script | dtrace extra ns per call | baseline dtrace extra ns per call "
              "| bpftrace extra ns per call | ratio dtrace / bpftrace "
              "| ratio baseline / bpftrace |")
        print("|---|---:|---:|---:|---:|---:|")
    else:
        print("| script | dtrace extra ns per call | bpftrace extra ns per call "
              "| ratio dtrace / bpftrace |")
        print("|---|---:|---:|---:|")
    for row, (_, d, b, old) in result.items():
        if with_baseline:
            print("| %s | %.1f | %.1f | %.1f | %.3f | %.3f |" % (row, d, old, b, d / b, old / b))
        else:
            print("| %s | %.1f | %.1f | %.3f |" % (row, d, b, d / b))
    print()
    print("getppid() untraced: %.1f ns per call; %d calls per run, %d runs each, medians."
          % (next(iter(result.values()))[0], calls, runs))


def parse_args():
    """The options of a per-call measurement of dtrace beside bpftrace (this one's and
    prog_runtime.py's), checked: root, both tracers, an executable baseline if given."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace"))
    ap.add_argument("--baseline", help="a second dtrace binary, measured in the same run")
    args = ap.parse_args()
    usdt_overhead.check_tools(args.dtrace, args.bpftrace)
    if args.baseline and not os.access(args.baseline, os.X_OK):
        usdt_overhead.die("baseline %s is not an executable" % args.baseline)
    return args


def main():
    args = parse_args()
    report(measure(args.dtrace, args.bpftrace, args.calls, args.runs, args.baseline),
           args.calls, args.runs)


if __name__ == "__main__":
    main()
