#!/usr/bin/env python3
"""Per-fire cost of a probe defined at run time (dtrace-dynprov) against a static one.

A benchmark, not a test. Needs root, gcc and `cargo build --release -p dtrace -p
dtrace-dynprov`. The C example (crates/dynprov/examples/dynprov.c) fires its dynamic probe
`dyncost:::tick` (through dtrace_dynprov_is_enabled/dtrace_dynprov_fire: a call into the
library, a semaphore test, a call to the site) and a static sys/sdt.h probe
`dynbench:::tick`, --fires times each, and prints ns per fire of each loop. It runs
untraced, then under `dtrace -Zq` counting both (the dynamic provider appears after dtrace
started, through its dlopen), --runs times; medians are printed, and the counts are checked.

Usage: python3 bench/dynprov_fire.py [--fires 1000000] [--runs 5]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fires", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    target = os.path.join(ROOT, "target/release")
    dtrace = os.path.join(target, "dtrace")
    for f in (dtrace, os.path.join(target, "libdtrace_dynprov.so")):
        if not os.path.exists(f):
            sys.exit("missing %s: cargo build --release -p dtrace -p dtrace-dynprov" % f)
    d = tempfile.mkdtemp(prefix="dynprov-bench-")
    exe = os.path.join(d, "dynprov")
    subprocess.run(["gcc", "-O2", "-I" + os.path.join(ROOT, "crates/dynprov/include"),
                    "-o", exe, os.path.join(ROOT, "crates/dynprov/examples/dynprov.c"),
                    "-L" + target, "-Wl,-rpath," + target, "-ldtrace_dynprov"], check=True)
    cmd = "%s dyncost %d bench" % (exe, a.fires)
    rows = {"untraced": [], "traced": []}
    pat = re.compile(r"dynamic ([0-9.]+) ns/fire, static ([0-9.]+) ns/fire")
    for _ in range(a.runs):
        out = subprocess.run(cmd.split(), capture_output=True, text=True, check=True).stdout
        rows["untraced"].append(tuple(map(float, pat.search(out).groups())))
        out = subprocess.run([dtrace, "-Zqn",
                              "dyncost$target:::tick { @d = count(); } "
                              "dynbench$target:::tick { @s = count(); }", "-c", cmd],
                             capture_output=True, text=True, check=True).stdout
        counts = re.findall(r"^\s+(\d+)\s*$", out, re.M)
        if counts != [str(a.fires)] * 2:
            sys.exit("counts %r, expected %d each:\n%s" % (counts, a.fires, out))
        rows["traced"].append(tuple(map(float, pat.search(out).groups())))
    for mode, r in rows.items():
        print("%-9s dynamic %7.1f ns/fire   static %7.1f ns/fire" % (
            mode, statistics.median(x[0] for x in r), statistics.median(x[1] for x in r)))


if __name__ == "__main__":
    main()
