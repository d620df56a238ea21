#!/usr/bin/env python3
"""The benchmark suite: every measurement of our `dtrace` side by side with `bpftrace`, in
one run, as one markdown report (docs/BENCHMARKS.md keeps the latest).

A benchmark, not a test: `cargo test` does not run it, and it checks nothing about the
numbers beyond saying, per target, whether it was met. It needs root, gcc with
<sys/sdt.h> (systemtap-sdt-dev), rustc, `bpftrace` on PATH and a release build
(`cargo build --release -p dtrace`). A missing tool is an error, never a silent skip.

Sections, each from its own script (run alone for more options):

  start-up           bench/startup.py       spawn -> BEGIN fired, spawn -> exit, spawn floor
  user probes        bench/usdt_overhead.py extra ns per fire: sys/sdt.h, `dtrace -h` and
                                            dtrace-usdt sites, a pid entry probe
  system calls       bench/syscall_cost.py  extra ns per getppid() call, four scripts
  size               bench/scale.py         `-l` wall time and peak RSS, 10,000 pid probes,
                                            a 1,000,000-key aggregation, profile-997

Targets (issue 15): start-up to BEGIN within 1.5 ms of the spawn floor (medians); `dtrace
-l` under 40 MB peak RSS; a fire of a 5-byte USDT site (`dtrace -h`, dtrace-usdt) at most
0.85 times a sys/sdt.h site's, traced by dtrace.

Usage: python3 bench/run.py [--quick] [--dtrace PATH] [--bpftrace PATH]
(--quick: fewer runs and fires, for trying the suite; the report says so.)
"""

import argparse
import os
import platform
import shutil
import sys
import time

import scale
import startup
import syscall_cost
import usdt_overhead

REPO = usdt_overhead.REPO


def machine(dtrace, bpftrace):
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    commit = os.popen("git -C %s rev-parse --short HEAD 2>/dev/null" % REPO).read().strip()
    print("- machine: %d CPUs, %s, kernel %s; load average at start %s"
          % (os.cpu_count() or 0, startup.cpu_model(), platform.release(), load))
    print("- dtrace: `%s` (%s), commit %s" % (os.path.relpath(dtrace, REPO),
                                             startup.first_line([dtrace, "-V"]), commit or "?"))
    print("- bpftrace: `%s` (%s)" % (bpftrace, startup.first_line([bpftrace, "--version"])))
    print("- date: %s UTC" % time.strftime("%Y-%m-%d %H:%M", time.gmtime()))


def met(ok):
    return "met" if ok else "NOT met"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace"))
    args = ap.parse_args()
    usdt_overhead.check_tools(args.dtrace, args.bpftrace)
    d, b = args.dtrace, args.bpftrace
    runs, fires, size_runs = (3, 200_000, 1) if args.quick else (5, 2_000_000, 3)

    print("## Benchmark suite (`python3 bench/run.py%s`)\n" % (" --quick" if args.quick else ""))
    machine(d, b)
    print()

    print("### Start-up (bench/startup.py)\n")
    _, _, st = startup.measure(d, b, 10 * runs, 3)
    print("| tool | spawn → BEGIN median ms | spawn → exit median ms |")
    print("|---|---:|---:|")
    for name in st:
        print("| %s | %.2f | %.2f |" % (name, st[name]["begin"]["median"],
                                        st[name]["exit"]["median"]))
    begin = {n: st[n]["begin"]["median"] for n in st}
    floor = begin["spawn floor (`echo`)"]
    print("\nRatios dtrace / bpftrace: to BEGIN %.3f, to exit %.3f. dtrace to BEGIN is "
          "%.2f ms above the spawn floor: target (at most 1.5 ms) %s.\n"
          % (begin["dtrace"] / begin["bpftrace"],
             st["dtrace"]["exit"]["median"] / st["bpftrace"]["exit"]["median"],
             begin["dtrace"] - floor, met(begin["dtrace"] - floor <= 1.5)))

    print("### User probes, per fire (bench/usdt_overhead.py)\n")
    user = usdt_overhead.measure(d, b, fires, runs)
    usdt_overhead.report(user, fires, runs)
    sdt = user[(usdt_overhead.SDT, "dtrace count")][1]
    for site in (usdt_overhead.HEADER, usdt_overhead.CRATE):
        ratio = user[(site, "dtrace count")][1] / sdt
        print("\n%s site traced by dtrace: %.3f times the sys/sdt.h site's extra cost; "
              "target (at most 0.85) %s." % (site, ratio, met(ratio <= 0.85)), end="")
    print("\n")

    print("### System calls, per call (bench/syscall_cost.py)\n")
    syscall_cost.report(syscall_cost.measure(d, b, fires, runs), fires, runs)
    print()

    print("### Size (bench/scale.py)\n")
    big = scale.measure(d, b, size_runs, 10_000, 200)
    scale.report(big)
    rss = big["listing"]["dtrace -l"][1]
    print("\n`dtrace -l` peak RSS %.1f MB: target (under 40 MB) %s." % (rss, met(rss < 40)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
