#!/usr/bin/env python3
"""Per-fire cost of `ustack()` with its stack window (unwound by call frame information in
the consumer) against the frame-pointer stack alone, and what the consumer spends
unwinding.

This is a benchmark, not a test. It needs root, gcc and a built `target/release/dtrace`
(`cargo build --release -p dtrace`); `--baseline PATH` names a `dtrace` built before
call-frame unwinding (its `ustack()` records the frame-pointer stack alone). A missing tool
is an error, never a silent skip.

The workload is a C program built with `-O2 -fomit-frame-pointer` whose loop calls a chain
of five functions N times, the innermost (`leaf`) probed with `pid`; it reports the loop's
own wall time, so start-up and attach costs are excluded.

  untraced          the program alone
  trace             pid$target:a.out:leaf:entry { trace(arg0); }   (a small record)
  @[ustack()]       ... { @[ustack()] = count(); }  (a frame-pointer key: no window)
  ustack, baseline  ... { ustack(); }  with --baseline's dtrace (frame pointers only)
  ustack            ... { ustack(); }  (the stack window: 4 KiB more per record)

Printed: the loop's median, extra ns per fire against untraced, drops (records the kernel
could not write), dtrace's own CPU time (user + system, median), which is where the
unwinding and symbolization happen, and the probe program's own time per fire (the
kernel's BPF statistics, `kernel.bpf_stats_enabled` turned on for the run and restored:
`run_time_ns / run_cnt` from the fdinfo of dtrace's program descriptors, sampled while
the workload pauses after its loop). On a busy machine the loop times are noisy (the
consumer competes with the workload for the CPUs); the program's time is not.

Usage: python3 bench/ustack_overhead.py [--fires 200000] [--runs 5] [--dtrace PATH]
       [--baseline PATH]
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from usdt_overhead import die, build_c

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile long sink;

__attribute__((noinline)) long leaf(long x) { sink += x; return sink; }
__attribute__((noinline)) long f4(long x) { return leaf(x + 1) + 1; }
__attribute__((noinline)) long f3(long x) { return f4(x * 2) + 2; }
__attribute__((noinline)) long f2(long x) { return f3(x + 3) + 3; }
__attribute__((noinline)) long f1(long x) { return f2(x - 1) * 5; }

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    struct timespec a, b, pause = {0, 200 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        sink += f1(i);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("LOOP_NS %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    fflush(stdout);
    /* Stay a while: dtrace reads the process's mappings while it lives. */
    nanosleep(&pause, 0);
    return 0;
}
"""

PROBE = "pid$target:a.out:leaf:entry "


def program_stats(pid):
    """`(run_cnt, run_time_ns)` of every BPF program descriptor process `pid` holds."""
    stats = {}
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return stats
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if "run_cnt" in info and "prog_type" in info:
            stats[fd] = (int(info["run_cnt"]), int(info["run_time_ns"]))
    return stats


def run(argv):
    """Run argv; the LOOP_NS the workload printed, the drops dtrace reported, the CPU
    seconds the run's processes took (dtrace and the workload), and the ns per run of the
    busiest BPF program dtrace held (None untraced)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last = {}
    while child.poll() is None:
        last = program_stats(child.pid) or last
        time.sleep(0.02)
    out_text, err_text = child.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"LOOP_NS (\d+)", out_text)
    if child.returncode != 0 or not m:
        die("run failed: %s\nstdout: %s\nstderr: %s" % (" ".join(argv), out_text[-2000:],
                                                       err_text[-2000:]), 1)
    drops = sum(int(d) for d in re.findall(r"dtrace: (\d+) drops? on CPU", err_text))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    busiest = max(last.values(), default=(0, 0))
    per_run = busiest[1] / busiest[0] if busiest[0] else None
    return int(m.group(1)), drops, cpu, per_run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fires", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--baseline", help="a dtrace without call-frame unwinding")
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("must run as root (dtrace loads BPF programs)")
    for path in [args.dtrace] + ([args.baseline] if args.baseline else []):
        if not os.path.exists(path):
            die("no dtrace at %s: run cargo build --release -p dtrace" % path)
    work = tempfile.mkdtemp(prefix="ustack-bench-")
    prog = build_c(work, "chain", PROGRAM, ["-fomit-frame-pointer"])
    cmd = "%s %d" % (prog, args.fires)

    def dt(binary, body):
        return [binary, "-q", "-o", "/dev/null", "-n", PROBE + body, "-c", cmd]

    configs = [
        ("untraced", [prog, str(args.fires)]),
        ("trace", dt(args.dtrace, "{ trace(arg0); }")),
        ("@[ustack()]", dt(args.dtrace, "{ @[ustack()] = count(); }")),
    ]
    if args.baseline:
        configs.append(("ustack, baseline", dt(args.baseline, "{ ustack(); }")))
    configs.append(("ustack", dt(args.dtrace, "{ ustack(); }")))
    samples = {name: [] for name, _ in configs}
    drops = {name: [] for name, _ in configs}
    cpu = {name: [] for name, _ in configs}
    prog = {name: [] for name, _ in configs}
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_were = f.read().strip()
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        for r in range(args.runs):
            order = configs if r % 2 == 0 else list(reversed(configs))
            for name, argv in order:
                ns, d, c, p = run(["setarch", "-R"] + argv)
                samples[name].append(ns)
                drops[name].append(d)
                cpu[name].append(c)
                if p is not None:
                    prog[name].append(p)
                print("run %d %s: %d ns, %d drops, %.2f s CPU, program %s ns" % (
                    r, name, ns, d, c, "-" if p is None else "%.0f" % p), file=sys.stderr)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_were)
    base = statistics.median(samples["untraced"])
    base_cpu = statistics.median(cpu["untraced"])
    print("| configuration | loop median (ms) | extra ns per fire, median | best "
          "| drops (median) | dtrace CPU (s, median) | program ns per fire (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, _ in configs:
        med = statistics.median(samples[name])
        print("| %s | %.1f | %.1f | %.1f | %d | %.2f | %s |" % (
            name, med / 1e6, (med - base) / args.fires,
            (min(samples[name]) - base) / args.fires, statistics.median(drops[name]),
            max(statistics.median(cpu[name]) - base_cpu, 0.0),
            "%.0f" % statistics.median(prog[name]) if prog[name] else "-"))
    print()
    print("%d fires per run, %d runs each; extra = traced minus untraced (median); dtrace "
          "CPU = the run's CPU time minus the untraced program's." % (args.fires, args.runs))


if __name__ == "__main__":
    main()
