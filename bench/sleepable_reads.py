#!/usr/bin/env python3
"""Per-fire cost of reading user memory from a USDT probe: a sleepable program
(`bpf_copy_from_user_str` / `bpf_copy_from_user`, which fault untouched pages in) against
the non-sleepable helpers (`bpf_probe_read_user_str` / `bpf_probe_read_user`), in one run.

This is a benchmark, not a test. It needs root, gcc with <sys/sdt.h> (Debian package
systemtap-sdt-dev) and two builds of `dtrace`: --before, one that reads user memory with
the non-sleepable helpers (a build of a commit before the sleepable programs, e.g. main at
b58f87e), and --after, one that makes probe programs reading user memory sleepable
(default target/release/dtrace). A missing tool is an error, never a silent skip.

The workload is a C program that touches a string literal once (so the non-sleepable
helpers can read it too) and then fires `bench:::sleephit(i, literal)` N times in a tight loop,
reporting the loop's own wall time, so start-up and attach costs are excluded. Two costs
per fire are reported: the program's own run time (the kernel's BPF statistics,
`run_time_ns / run_cnt`, enabled with BPF_ENABLE_STATS for the benchmark's duration only
and read with `bpftool` while the workload waits after its loop), which a loaded machine
disturbs little; and (traced loop time - untraced loop time) / N, the whole cost with the
uprobe trap, which it disturbs a lot. Each script runs under both builds:

  count       @ = count();                        no user read: never sleepable
  copyinstr   @ = count(); this->s = copyinstr(arg1);
  copyin      @ = count(); this->c = *(char *)copyin(arg1, 8);

Every configuration runs under `setarch -R` (see bench/usdt_overhead.py: without it the
uprobe's own cost is bimodal from run to run), interleaved, the order flipped every run.

Usage: python3 bench/sleepable_reads.py --before PATH [--after PATH] [--fires N] [--runs N]
"""

import argparse
import ctypes
import json
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

static const char literal[] = "include/linux/kernel.h";

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct timespec a, b;
    if (*(volatile const char *)literal != 'i')
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        DTRACE_PROBE2(bench, sleephit, i, literal);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("LOOP_NS %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    fflush(stdout);
    /* Time for the benchmark to read the program's statistics. */
    if (argc > 2)
        sleep(atoi(argv[2]));
    return 0;
}
"""

SCRIPTS = [
    ("count", "bench$target:::sleephit { @ = count(); }"),
    ("copyinstr", "bench$target:::sleephit { @ = count(); this->s = copyinstr(arg1); }"),
    ("copyin", "bench$target:::sleephit { @ = count(); this->c = *(char *)copyin(arg1, 8); }"),
]


def enable_stats():
    """BPF_ENABLE_STATS (BPF_STATS_RUN_TIME): programs count their run time while the
    returned descriptor is open."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 30)()  # union bpf_attr, enable_stats.type = 0
    fd = libc.syscall(321, 32, ctypes.byref(attr), ctypes.sizeof(attr))  # SYS_bpf, BPF_ENABLE_STATS
    if fd < 0:
        die("BPF_ENABLE_STATS failed: %s" % os.strerror(ctypes.get_errno()))
    return fd


def prog_stats(name):
    """(run_time_ns, run_cnt) of the loaded program called name."""
    out = subprocess.run(["bpftool", "-j", "prog", "show", "name", name],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    progs = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    progs = [p for ps in progs for p in (ps if isinstance(ps, list) else [ps])]
    if len(progs) != 1:
        die("expected one program %s, found %d: %s" % (name, len(progs), out.stderr))
    return progs[0].get("run_time_ns", 0), progs[0].get("run_cnt", 0)


def measure(argv, traced):
    """Run argv; return the LOOP_NS the workload printed and, if traced, the program's
    ns per run (no dtrace error allowed)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.match(r"LOOP_NS (\d+)", line)
    per_run = None
    if m and traced:
        ns, cnt = prog_stats("dt_sleephit")
        per_run = ns / cnt if cnt else None
    rest, err = p.communicate()
    if p.returncode != 0 or not m or "error" in err:
        die("run failed: %s\nstdout: %s\nstderr: %s" % (" ".join(argv), line + rest, err), 1)
    return int(m.group(1)), per_run


def path_of(dtrace, script):
    """Whether the build loads script's program sleepable (its -v line says so)."""
    out = subprocess.run([dtrace, "-v", "-q", "-n", script, "-c", "/bin/true"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return "sleepable" if "sleepable program" in out.stderr else "not sleepable"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fires", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before", required=True, help="a dtrace reading with the helpers")
    ap.add_argument("--after", default=os.path.join(REPO, "target/release/dtrace"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("must run as root (dtrace loads BPF programs)")
    for d in (args.before, args.after):
        if not os.path.exists(d):
            die("no dtrace at %s" % d)
    work = tempfile.mkdtemp(prefix="sleepable-bench-")
    prog = build_c(work, "hit", PROGRAM)
    cmd = "%s %d 1" % (prog, args.fires)
    configs = [("untraced", "", [prog, str(args.fires)])]
    for name, script in SCRIPTS:
        for build, dtrace in (("before", args.before), ("after", args.after)):
            configs.append(("%s, %s" % (name, build), script,
                            [dtrace, "-q", "-n", script, "-c", cmd]))
    stats = enable_stats()
    loops = {name: [] for name, _, _ in configs}
    runs = {name: [] for name, _, _ in configs}
    for r in range(args.runs):
        order = configs if r % 2 == 0 else list(reversed(configs))
        for name, script, argv in order:
            loop, per_run = measure(["setarch", "-R"] + argv, bool(script))
            loops[name].append(loop)
            if per_run is not None:
                runs[name].append(per_run)
            print("run %d %s: %d ns, program %s ns" % (r, name, loop, per_run), file=sys.stderr)
    os.close(stats)
    base = statistics.median(loops["untraced"])
    print("| configuration | program | program ns per fire | extra ns per fire (loop) |")
    print("|---|---|---:|---:|")
    for name, script, argv in configs:
        if not script:
            continue
        kind = path_of(argv[0], script.replace("$target", "*"))
        print("| %s | %s | %.1f | %.1f |" % (
            name, kind, statistics.median(runs[name]),
            (statistics.median(loops[name]) - base) / args.fires))
    print()
    print("%d fires per run, %d runs each, medians; extra = traced minus untraced loop time."
          % (args.fires, args.runs))

if __name__ == "__main__":
    main()
