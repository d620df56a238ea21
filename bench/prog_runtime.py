#!/usr/bin/env python3
"""The BPF programs' own run time per firing, by the kernel's statistics: our `dtrace`
against `bpftrace` on bench/syscall_cost.py's scripts, a string predicate and the `self->`
idiom, in one run.

A benchmark, not a test. bench/syscall_cost.py measures what a traced system call costs
the caller, most of which is the kernel's tracepoint machinery; this measures only what the
generated code controls: the kernel's `run_time_ns / run_cnt` of the programs a tool
loaded (`bpftool prog show`), with `kernel.bpf_stats_enabled` on for the run (it is
restored afterwards; while it is on, every BPF program on the machine pays two clock reads
per run, these included). The programs count every firing, the machine's other system
calls too, so the figure is an average over whatever fired.

With --baseline PATH a second dtrace binary runs the same scripts in the same rounds.

Needs root, gcc, bpftool and bpftrace on PATH and a built `target/release/dtrace`.

Usage: python3 bench/prog_runtime.py [--calls 2000000] [--runs 5] [--baseline PATH]
"""

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import syscall_cost
import usdt_overhead

STATS = "/proc/sys/kernel/bpf_stats_enabled"

# bench/syscall_cost.py's scripts, and a string predicate on every system call (the
# workload is named getppid).
SCRIPTS = syscall_cost.SCRIPTS + [
    ("every syscall, `/execname == \"getppid\"/` / `/comm == \"getppid\"/`",
     'syscall:::entry /execname == "getppid"/ { @[probefunc] = count(); }',
     'tracepoint:raw_syscalls:sys_enter /comm == "getppid"/ { @[args->id] = count(); }'),
    # The thread-local idiom: a run is one half of a pair (the entry's or the return's).
    ("`self->ts` entry/return / `@ts[tid]`",
     "syscall::getppid:entry { self->ts = timestamp; } "
     "syscall::getppid:return /self->ts/ { @ = sum(timestamp - self->ts); self->ts = 0; }",
     "tracepoint:syscalls:sys_enter_getppid { @ts[tid] = nsecs; } "
     "tracepoint:syscalls:sys_exit_getppid /@ts[tid]/ { @ = sum(nsecs - @ts[tid]); "
     "delete(@ts[tid]); }"),
]


def programs():
    """{id: (run_cnt, run_time_ns)} of every loaded BPF program."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], stdout=subprocess.PIPE,
                         check=True, text=True).stdout
    return {p["id"]: (p.get("run_cnt", 0), p.get("run_time_ns", 0)) for p in json.loads(out)}


def ns_per_run(argv):
    """Run argv (a tracer with a workload under -c); the ns per run of the programs it
    loaded, from their last statistics seen before they were unloaded."""
    before = set(programs())
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = {}
    while proc.poll() is None:
        for pid, stats in programs().items():
            if pid not in before:
                seen[pid] = stats
        time.sleep(0.05)
    if proc.returncode != 0:
        usdt_overhead.die("run failed: %s\n%s" % (" ".join(argv), proc.stderr.read()), 1)
    runs = sum(c for c, _ in seen.values())
    if runs == 0:
        usdt_overhead.die("%s: no program of it ran" % " ".join(argv), 1)
    return sum(t for _, t in seen.values()) / runs


def measure(dtrace, bpftrace, calls, runs, baseline=None):
    """{row: (dtrace ns per run, bpftrace ns per run, baseline's or None)}."""
    work = tempfile.mkdtemp(prefix="prog-runtime-")
    prog = usdt_overhead.build_c(work, "getppid", syscall_cost.PROGRAM)
    cmd = "%s %d" % (prog, calls)
    tools = [("dtrace", dtrace), ("bpftrace", bpftrace)] + ([("baseline", baseline)]
                                                             if baseline else [])
    configs = []
    for row, d, b in SCRIPTS:
        for tool, path in tools:
            script = b if tool == "bpftrace" else d
            flag = "-e" if tool == "bpftrace" else "-n"
            configs.append(((row, tool), [path, "-q", flag, script, "-c", cmd]
                            if tool != "bpftrace" else [path, flag, script, "-c", cmd]))
    samples = {name: [] for name, _ in configs}
    with open(STATS) as f:
        was = f.read().strip()
    try:
        with open(STATS, "w") as f:
            f.write("1")
        for r in range(runs):
            for name, argv in (configs if r % 2 == 0 else list(reversed(configs))):
                samples[name].append(ns_per_run(argv))
                print("run %d %s: %.1f ns" % (r, name, samples[name][-1]), file=sys.stderr)
    finally:
        with open(STATS, "w") as f:
            f.write(was)
        shutil.rmtree(work, ignore_errors=True)

    def med(row, tool):
        return statistics.median(samples[(row, tool)])
    return {row: (med(row, "dtrace"), med(row, "bpftrace"),
                  med(row, "baseline") if baseline else None)
            for row, _, _ in SCRIPTS}


def report(result, runs):
    with_baseline = any(r[2] is not None for r in result.values())
    head = "| script | dtrace ns per run |"
    rule = "|---|---:|"
    if with_baseline:
        head += " baseline dtrace ns per run |"
        rule += "---:|"
    print(head + " bpftrace ns per run | ratio dtrace / bpftrace |")
    print(rule + "---:|---:|")
    for row, (d, b, old) in result.items():
        cells = "| %s | %.1f |" % (row, d)
        if with_baseline:
            cells += " %.1f |" % old
        print(cells + " %.1f | %.3f |" % (b, d / b))
    print()
    print("Program run time per run (kernel.bpf_stats_enabled), %d runs each, medians." % runs)


def main():
    args = syscall_cost.parse_args()
    if not shutil.which("bpftool"):
        usdt_overhead.die("bpftool is not on PATH", 2)
    report(measure(args.dtrace, args.bpftrace, args.calls, args.runs, args.baseline), args.runs)


if __name__ == "__main__":
    main()
