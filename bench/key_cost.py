#!/usr/bin/env python3
"""Cost of an aggregation update by key kind, per system call: `@[pid]` against
`@[execname]` (a string key), every system call counted `@[probefunc]`, and a histogram
(`quantize()`) keyed `@[pid]`, for our `dtrace` (and optionally an older build of it) and
`bpftrace`, in one run.

This is a benchmark, not a test. It needs root, gcc, `bpftrace` on PATH and a built
`target/release/dtrace` (`cargo build --release -p dtrace`). A missing tool is an error,
never a silent skip.

The workload is a C program calling `getppid()` (as `syscall(SYS_getppid)`, which no C
library caches) N times in a tight loop and reporting the loop's own time on CPU
(`CLOCK_THREAD_CPUTIME_ID`: the probes' programs run in the calling thread, and time the
thread waits for a CPU is left out, so a machine shared with other jobs disturbs the
figure less than wall time), so start-up and attach costs are excluded. The figure is ns
per call (traced loop time / N); "extra" subtracts the untraced median.

Configurations, each run --runs times, interleaved (order flipped every run):

  untraced                        the program alone
  dtrace @[pid]                   syscall::getppid:entry { @[pid] = count(); }
  dtrace @[execname]              syscall::getppid:entry { @[execname] = count(); }
  dtrace every syscall @[probefunc]
                                  syscall:::entry { @[probefunc] = count(); }
  dtrace @[pid] = quantize(pid)   syscall::getppid:entry { @[pid] = quantize(pid); }
  bpftrace @[pid]                 tracepoint:syscalls:sys_enter_getppid { @[pid] = count(); }
  bpftrace @[comm]                tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }
  bpftrace every syscall @[args->id]
                                  tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }
  bpftrace @[pid] = hist(pid)     tracepoint:syscalls:sys_enter_getppid { @[pid] = hist(pid); }

With --baseline PATH, the dtrace rows are also run with that binary (an older build,
to compare before and after in the same run).

With --program-cost, the script also measures what the kernel counts for the probe's
program itself (ns per run: `run_time_ns / run_cnt` of `bpftool prog show`, with
`kernel.bpf_stats_enabled` set to 1 for the measurement and put back after): each traced
configuration runs the loop for --cost-seconds, and the busiest program it loaded is read;
--cost-runs N measures each N times, interleaved as the loop times are, and keeps the
median (one measurement after another drifts with the machine's load).
This leaves out what the kernel does around the program (a classic tracepoint fills its
record before bpftrace's program runs), which the per-call figure includes.

Usage: python3 bench/key_cost.py [--calls 2000000] [--runs 5] [--dtrace PATH]
                                 [--baseline PATH] [--bpftrace PATH] [--program-cost]
                                 [--cost-seconds 3] [--cost-runs 1]
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from usdt_overhead import die, build_c, loop_ns

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    for (long i = 0; i < n; i++)
        syscall(SYS_getppid);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    printf("LOOP_NS %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
"""

DTRACE = [
    ("@[pid]", "syscall::getppid:entry { @[pid] = count(); }"),
    ("@[execname]", "syscall::getppid:entry { @[execname] = count(); }"),
    ("every syscall @[probefunc]", "syscall:::entry { @[probefunc] = count(); }"),
    ("@[pid] = quantize(pid)", "syscall::getppid:entry { @[pid] = quantize(pid); }"),
]

BPFTRACE = [
    ("@[pid]", "tracepoint:syscalls:sys_enter_getppid { @[pid] = count(); }"),
    ("@[comm]", "tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }"),
    ("every syscall @[args->id]", "tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }"),
    ("@[pid] = hist(pid)", "tracepoint:syscalls:sys_enter_getppid { @[pid] = hist(pid); }"),
]


def programs():
    """The loaded BPF programs, as `bpftool prog show -j` lists them."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True)
    if out.returncode != 0:
        die("bpftool prog show failed: " + out.stderr)
    return json.loads(out.stdout)


def program_cost(argv, seconds):
    """Start argv (a tracer running a long loop), and after `seconds` return the ns per
    run of the busiest program it loaded (bpf_stats must be on)."""
    before = {p["id"] for p in programs()}
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(seconds)
        new = [p for p in programs() if p["id"] not in before and p.get("run_cnt")]
    finally:
        child.send_signal(signal.SIGINT)
        child.wait()
    if not new:
        die("no program of %s ran" % " ".join(argv), 1)
    busiest = max(new, key=lambda p: p["run_cnt"])
    return busiest["run_time_ns"] / busiest["run_cnt"]


def program_costs(configs, prog, seconds, runs):
    """ns per program run of each traced configuration (the median of `runs`, interleaved
    and order flipped every run as the loop times are), bpf_stats on meanwhile."""
    stats = "/proc/sys/kernel/bpf_stats_enabled"
    with open(stats) as f:
        previous = f.read().strip()
    with open(stats, "w") as f:
        f.write("1")
    try:
        samples = {name: [] for name, _ in configs[1:]}
        for r in range(runs):
            order = configs[1:] if r % 2 == 0 else list(reversed(configs[1:]))
            for name, argv in order:
                # The same command, with a loop long enough to outlast the measurement.
                long_run = argv[:-1] + ["%s %d" % (prog, 10**9)]
                samples[name].append(program_cost(long_run, seconds))
                print("run %d %s: %.1f ns per program run" % (r, name, samples[name][-1]),
                      file=sys.stderr)
        return {name: statistics.median(s) for name, s in samples.items()}
    finally:
        with open(stats, "w") as f:
            f.write(previous)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--baseline", help="an older dtrace binary to run the dtrace rows with too")
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace"))
    ap.add_argument("--program-cost", action="store_true",
                    help="also measure ns per run of each probe program (bpf_stats)")
    ap.add_argument("--cost-seconds", type=float, default=3.0)
    ap.add_argument("--cost-runs", type=int, default=1,
                    help="measurements of each program's cost (medians)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("must run as root (the tracers load BPF programs)")
    for path in [args.dtrace] + ([args.baseline] if args.baseline else []):
        if not os.path.exists(path):
            die("no dtrace at %s: run cargo build --release -p dtrace" % path)
    if not args.bpftrace:
        die("bpftrace not found: apt-get install bpftrace")
    work = tempfile.mkdtemp(prefix="key-bench-")
    prog = build_c(work, "ppid", PROGRAM)
    cmd = "%s %d" % (prog, args.calls)
    configs = [("untraced", [prog, str(args.calls)])]
    binaries = [("dtrace", args.dtrace)]
    if args.baseline:
        binaries.append(("baseline dtrace", args.baseline))
    for label, path in binaries:
        for name, script in DTRACE:
            configs.append(("%s %s" % (label, name), [path, "-q", "-n", script, "-c", cmd]))
    for name, script in BPFTRACE:
        configs.append(("bpftrace %s" % name, [args.bpftrace, "-e", script, "-c", cmd]))
    samples = {name: [] for name, _ in configs}
    for r in range(args.runs):
        order = configs if r % 2 == 0 else list(reversed(configs))
        for name, argv in order:
            samples[name].append(loop_ns(argv))
            print("run %d %s: %d ns" % (r, name, samples[name][-1]), file=sys.stderr)
    base = statistics.median(samples["untraced"])
    print("| configuration | ns per call (median) | min | max | extra ns per call |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in configs:
        med = statistics.median(samples[name])
        print("| %s | %.1f | %.1f | %.1f | %.1f |" % (
            name, med / args.calls, min(samples[name]) / args.calls,
            max(samples[name]) / args.calls, (med - base) / args.calls))
    print()
    print("%d calls per run, %d runs each, medians; extra = traced minus untraced." % (args.calls, args.runs))
    if args.program_cost:
        if not shutil.which("bpftool"):
            die("bpftool not found (needed by --program-cost)")
        costs = program_costs(configs, prog, args.cost_seconds, args.cost_runs)
        print()
        print("| configuration | ns per program run (median of %d) |" % args.cost_runs)
        print("|---|---:|")
        for name, _ in configs[1:]:
            print("| %s | %.1f |" % (name, costs[name]))


if __name__ == "__main__":
    main()
