#!/usr/bin/env python3
"""Costs that grow with size: our `dtrace` against `bpftrace`, in one run.

A benchmark, not a test. Needs root, gcc with <sys/sdt.h>, `bpftrace` on PATH and a built
`target/release/dtrace`. Measured, each --runs times (medians):

  listing       `dtrace -l` and `bpftrace -l`: wall time and peak RSS (output to a pipe
                that is read and counted)
  pid probes    a program with 10,000 functions (`bench_f0` ... `bench_f9999`, each called
                once): `dtrace -qn 'pid$target:a.out:bench_f*:entry { @ = count(); }' -c
                PROG` from spawn to exit (compile, attach, run, detach), the count checked;
                bpftrace attaches one perf-event uprobe per function, whose close costs the
                kernel an RCU grace period (about 0.1 s each here), so it runs on a program of
                --bpftrace-functions functions (default 200) and its time per function is
                reported beside ours
  aggregation   1,000,000 keys: `bench$target:::hit { @[arg0] = count(); }` over 1,000,000
                fires of a sys/sdt.h probe with distinct arguments (`-x aggsize=128m`, room
                for 1,048,576 keys; bpftrace: BPFTRACE_MAP_KEYS_MAX=1048576): the tracer's
                peak RSS and the time from the workload's last line to the tracer's exit
                (printing the aggregation, detaching), the lines printed checked
  profile       `profile-997 { @[stack()] = count(); }` (bpftrace: `profile:hz:997 {
                @[kstack] = count(); }`) over a CPU-bound loop of about a second: the loop's
                extra CPU time (the samples' programs run in the interrupts that land on
                it, which this kernel, without IRQ_TIME_ACCOUNTING, counts as its time),
                per second of loop

Usage: python3 bench/scale.py [--runs 3] [--functions 10000] [--bpftrace-functions 200]
                              [--only listing,pid,aggregation,profile]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import usdt_overhead

REPO = usdt_overhead.REPO

SPIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 400000000;
    volatile unsigned long x = 1;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    printf("LOOP_NS %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
"""


class Timed:
    """One run of a command: wall time, time from the marker's arrival to exit, peak RSS,
    lines and the first bytes of stdout."""

    def __init__(self, argv, marker=b"LOOP_NS", env=None, what=None):
        r, w = os.pipe()
        t0 = time.perf_counter_ns()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=w,
                                stderr=subprocess.PIPE, env=env, close_fds=True)
        os.close(w)
        self.lines, head, marked, tail = 0, bytearray(), None, b""
        with os.fdopen(r, "rb", buffering=0) as out:
            while True:
                chunk = out.read(1 << 16)
                if not chunk:
                    break
                if marked is None and marker in tail + chunk:
                    marked = time.perf_counter_ns()
                tail = chunk[-len(marker):]
                self.lines += chunk.count(b"\n")
                if len(head) < 4096:
                    head += chunk[:4096]
        err = proc.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(proc.pid, 0)
        end = time.perf_counter_ns()
        self.wall_ms = (end - t0) / 1e6
        self.after_marker_ms = (end - marked) / 1e6 if marked else None
        self.rss_mb = usage.ru_maxrss / 1024
        self.head = head.decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            usdt_overhead.die("%s failed: %s\n%s%s" % (what or argv[0], " ".join(argv),
                                                       self.head, err), 1)


def median(runs, attr):
    return statistics.median(getattr(t, attr) for t in runs)


def listing(dtrace, bpftrace, runs):
    """{tool: (wall ms, peak RSS MB, lines)} of the bare listing."""
    out = {}
    for tool, argv in (("dtrace -l", [dtrace, "-l"]), ("bpftrace -l", [bpftrace, "-l"])):
        t = [Timed(argv, marker=b"\0") for _ in range(runs)]
        out[tool] = (median(t, "wall_ms"), median(t, "rss_mb"), t[0].lines)
    return out


def many_functions(work, n):
    """A program with n functions bench_f0.. each called once (through a table)."""
    src = "".join("__attribute__((noinline)) int bench_f%d(int x) { return x + %d; }\n" % (i, i)
                  for i in range(n))
    src += "int (*const table[])(int) = {%s};\n" % ",".join("bench_f%d" % i for i in range(n))
    src += ("int main(void) { int s = 0; for (unsigned i = 0; i < %d; i++) s += table[i](1);"
            " return s == 0; }\n" % n)
    return usdt_overhead.build_c(work, "many%d" % n, src, ["-O1"])


def pid_probes(work, dtrace, bpftrace, functions, bpftrace_functions, runs):
    """{tool: (functions, wall ms)}; counts checked."""
    out = {}
    prog = many_functions(work, functions)
    argv = [dtrace, "-q", "-n", "pid$target:a.out:bench_f*:entry { @ = count(); }", "-c", prog]
    t = [Timed(argv) for _ in range(runs)]
    if "%d" % functions not in t[0].head:
        usdt_overhead.die("dtrace counted no %d calls:\n%s" % (functions, t[0].head), 1)
    out["dtrace"] = (functions, median(t, "wall_ms"))
    prog = many_functions(work, bpftrace_functions)
    argv = [bpftrace, "-e", "uprobe:%s:bench_f* { @ = count(); }" % prog, "-c", prog]
    t = [Timed(argv) for _ in range(runs)]
    if "@: %d" % bpftrace_functions not in t[0].head:
        usdt_overhead.die("bpftrace counted no %d calls:\n%s" % (bpftrace_functions, t[0].head), 1)
    out["bpftrace"] = (bpftrace_functions, median(t, "wall_ms"))
    return out


def aggregation(work, dtrace, bpftrace, runs, keys=1_000_000):
    """{tool: (peak RSS MB, ms from the workload's line to exit, lines)}."""
    prog = usdt_overhead.build_c(work, "hit", usdt_overhead.PROGRAM)
    cmd = "%s %d" % (prog, keys)
    env = dict(os.environ, BPFTRACE_MAP_KEYS_MAX=str(1 << 20))
    configs = [
        ("dtrace", [dtrace, "-q", "-x", "aggsize=128m", "-n",
                    "bench$target:::hit { @[arg0] = count(); }", "-c", cmd], None),
        ("bpftrace", [bpftrace, "-e", "usdt:%s:bench:hit { @[arg0] = count(); }" % prog,
                      "-c", cmd], env),
    ]
    out = {}
    for tool, argv, e in configs:
        t = [Timed(argv, env=e) for _ in range(runs)]
        if t[0].lines < keys:
            usdt_overhead.die("%s printed %d lines, not %d keys:\n%s"
                              % (tool, t[0].lines, keys, t[0].head), 1)
        out[tool] = (median(t, "rss_mb"), median(t, "after_marker_ms"), t[0].lines)
    return out


def profile(work, dtrace, bpftrace, runs):
    """{config: extra ms of loop per second of loop}."""
    prog = usdt_overhead.build_c(work, "spin", SPIN)
    configs = [
        ("untraced", [prog]),
        ("dtrace", [dtrace, "-q", "-n", "profile-997 { @[stack()] = count(); }", "-c", prog]),
        ("bpftrace", [bpftrace, "-e", "profile:hz:997 { @[kstack] = count(); }", "-c", prog]),
    ]
    samples = {name: [] for name, _ in configs}
    for r in range(runs):
        for name, argv in (configs if r % 2 == 0 else list(reversed(configs))):
            samples[name].append(usdt_overhead.loop_ns(argv))
    base = statistics.median(samples["untraced"])
    return {name: (statistics.median(v) - base) / base * 1000
            for name, v in samples.items() if name != "untraced"}


PARTS = ("listing", "pid", "aggregation", "profile")


def measure(dtrace, bpftrace, runs, functions, bpftrace_functions, only=PARTS):
    work = tempfile.mkdtemp(prefix="scale-bench-")
    parts = {
        "listing": lambda: listing(dtrace, bpftrace, runs),
        "pid": lambda: pid_probes(work, dtrace, bpftrace, functions, bpftrace_functions, runs),
        "aggregation": lambda: aggregation(work, dtrace, bpftrace, runs),
        "profile": lambda: profile(work, dtrace, bpftrace, runs),
    }
    result = {name: parts[name]() for name in PARTS if name in only}
    shutil.rmtree(work, ignore_errors=True)
    return result


def report(r):
    if "listing" in r:
        report_listing(r)
    if "pid" in r:
        report_pid(r)
    if "aggregation" in r:
        report_aggregation(r)
    if "profile" in r:
        report_profile(r)


def report_listing(r):
    print("| listing | wall ms | peak RSS MB | lines |")
    print("|---|---:|---:|---:|")
    for tool, (wall, rss, lines) in r["listing"].items():
        print("| `%s` | %.1f | %.1f | %d |" % (tool, wall, rss, lines))
    print()


def report_pid(r):
    print("| pid entry probes | functions | spawn → exit ms | ms per function |")
    print("|---|---:|---:|---:|")
    for tool, (n, wall) in r["pid"].items():
        print("| %s | %d | %.1f | %.3f |" % (tool, n, wall, wall / n))
    print()


def report_aggregation(r):
    print("| 1,000,000-key aggregation | peak RSS MB | last fire → exit ms (print) | lines |")
    print("|---|---:|---:|---:|")
    for tool, (rss, ms, lines) in r["aggregation"].items():
        print("| %s | %.1f | %.1f | %d |" % (tool, rss, ms, lines))
    print()


def report_profile(r):
    print("| profile-997, `@[stack()]` / `@[kstack]` | extra ms of loop per s |")
    print("|---|---:|")
    for tool, extra in r["profile"].items():
        print("| %s | %.1f |" % (tool, extra))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--functions", type=int, default=10_000)
    ap.add_argument("--bpftrace-functions", type=int, default=200)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace"))
    ap.add_argument("--only", default=",".join(PARTS),
                    help="the parts to measure, comma-separated: " + ", ".join(PARTS))
    args = ap.parse_args()
    only = args.only.split(",")
    unknown = [p for p in only if p not in PARTS]
    if unknown:
        usdt_overhead.die("unknown part %s: the parts are %s"
                          % (", ".join(unknown), ", ".join(PARTS)), 2)
    usdt_overhead.check_tools(args.dtrace, args.bpftrace)
    report(measure(args.dtrace, args.bpftrace, args.runs, args.functions,
                   args.bpftrace_functions, only))


if __name__ == "__main__":
    main()
