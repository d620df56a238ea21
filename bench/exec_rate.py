#!/usr/bin/env python3
"""Exec rate with and without a provider glob waiting for new processes.

A benchmark, not a test: nothing runs it from `cargo test` and it asserts nothing about
the numbers. It needs root, gcc and a built `target/release/dtrace`.

`dtrace -n 'PROV*:::tick'` with no process of the provider running attaches an exec
watcher (a tp_btf program on sched_process_exec): the first exec of each binary not
examined yet is stopped while dtrace looks for probes in it, and every exec costs one
hash lookup in the kernel. This measures what that costs a machine that execs a lot:

  off      execs/s of a small C program (no probes), nothing traced;
  armed    the same while `dtrace -qn 'benchprov*:::tick { @ = count(); }'` waits
           for a provider that never appears (every exec looked up, none stopped after
           the first);
  traced   the same program with a `benchprov:::tick` USDT probe, traced by that glob
           (first exec stopped and attached, then every exec runs the probe once).

Each mode runs the program --runs times from a small C driver (posix_spawn and waitpid in
a loop), after --warmup runs; modes are interleaved over --rounds rounds and the median
rate is printed.

Usage:
  python3 bench/exec_rate.py [--runs 2000] [--rounds 3] [--dtrace PATH]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = r"""
#include <sys/sdt.h>
int main(void) {
#ifdef PROBE
    DTRACE_PROBE(benchprov, tick);
#endif
    return 0;
}
"""


def build(dirname, name, probe):
    src = os.path.join(dirname, name + ".c")
    with open(src, "w") as f:
        f.write(SOURCE)
    exe = os.path.join(dirname, name)
    flags = ["-DPROBE"] if probe else []
    subprocess.run(["gcc", "-O2", *flags, "-o", exe, src], check=True)
    return exe


DRIVER = r"""
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
extern char **environ;
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    char *args[] = {argv[2], NULL};
    for (int i = 0; i < n; i++) {
        pid_t pid;
        if (posix_spawn(&pid, argv[2], NULL, NULL, args, environ) != 0) return 1;
        waitpid(pid, NULL, 0);
    }
    return 0;
}
"""


def build_driver(dirname):
    src = os.path.join(dirname, "driver.c")
    with open(src, "w") as f:
        f.write(DRIVER)
    exe = os.path.join(dirname, "driver")
    subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
    return exe


def rate(driver, exe, runs):
    start = time.perf_counter()
    subprocess.run([driver, str(runs), exe], check=True)
    return runs / (time.perf_counter() - start)


def start_dtrace(dtrace):
    p = subprocess.Popen(
        [dtrace, "-qn", 'BEGIN { printf("ready\\n"); } benchprov*:::tick { @ = count(); }'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != "ready":
        p.kill()
        sys.exit("dtrace did not start: " + p.stderr.read())
    return p


def stop_dtrace(p):
    p.send_signal(2)
    out, err = p.communicate(timeout=30)
    return out.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--dtrace", default="target/release/dtrace")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    if not os.access(a.dtrace, os.X_OK):
        sys.exit("no dtrace at %s (cargo build --release -p dtrace)" % a.dtrace)
    d = tempfile.mkdtemp(prefix="exec-rate-")
    plain = build(d, "plain", False)
    probed = build(d, "probed", True)
    driver = build_driver(d)
    results = {"off": [], "armed": [], "traced": []}
    for _ in range(a.rounds):
        rate(driver, plain, a.warmup)
        results["off"].append(rate(driver, plain, a.runs))
        p = start_dtrace(a.dtrace)
        rate(driver, plain, a.warmup)
        results["armed"].append(rate(driver, plain, a.runs))
        stop_dtrace(p)
        p = start_dtrace(a.dtrace)
        rate(driver, probed, a.warmup)
        results["traced"].append(rate(driver, probed, a.runs))
        count = stop_dtrace(p)
        if count != str(a.runs + a.warmup):
            sys.exit("traced runs counted %r, expected %d" % (count, a.runs + a.warmup))
    for mode, rates in results.items():
        print("%-7s %8.0f execs/s  (runs: %s)" % (
            mode, statistics.median(rates), ", ".join("%.0f" % r for r in rates)))


if __name__ == "__main__":
    main()
