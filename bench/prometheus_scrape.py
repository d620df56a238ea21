#!/usr/bin/env python3
"""Scrape time of `dtrace -x prometheus` for 10k series (issue 13).

This is a benchmark, not a test: it asserts only that every scrape served the series
expected. It needs root, gcc and a built `target/release/dtrace` (or --dtrace PATH).

A C program calls getpgid(i) for i in 0..N (N = --series, 10000 by default), then waits;
dtrace, started with it (-c), aggregates those calls into N series per aggregation:

  count  syscall::getpgid:entry /pid == $target/ { @calls[arg0] = count(); }
  sum    the same with @bytes[arg0, "x"] = sum(arg0)      (two labels, one a string)
  quantize  @lat[arg0 % 100] = quantize(arg0)             (100 histograms, ~15 buckets each)

Once every series is there, it GETs /metrics --runs times (one scrape at a time, as a
Prometheus server does) and reports the time from connect to the last byte, and the size.

Usage:
  python3 bench/prometheus_scrape.py [--series 10000] [--runs 30] [--dtrace PATH]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from promserve import serve

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
#include <unistd.h>
#include <sys/syscall.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    for (long i = 0; i < n; i++) syscall(SYS_getpgid, i);
    while (access(argv[2], F_OK) != 0) usleep(20000);
    return 0;
}
"""

CASES = [
    ("count, 1 integer label", "@calls[arg0] = count();", "dtrace_calls_total{"),
    ("sum, 2 labels (integer, string)", '@bytes[arg0, "x"] = sum(arg0);', "dtrace_bytes{"),
    ("quantize, 100 histograms", "@lat[arg0 % 100] = quantize(arg0);", "dtrace_lat_bucket{"),
]


def scrape(url):
    t0 = time.perf_counter()
    body = urllib.request.urlopen(url, timeout=30).read()
    return (time.perf_counter() - t0) * 1000, body.decode()


def run_case(args, exe, tmp, name, action, family):
    done = os.path.join(tmp, "done")
    if os.path.exists(done):
        os.unlink(done)
    script = "syscall::getpgid:entry /pid == $target/ { " + action + " }"
    dt, url = serve(
        [args.dtrace, "-q", "-x", "prometheus=127.0.0.1:0", "-n", script,
         "-c", f"{exe} {args.series} {done}"],
        "bench/prometheus_scrape.py")
    expected = min(args.series, 100) if "lat" in family else args.series
    deadline = time.monotonic() + 60
    while True:
        _, body = scrape(url)
        keys = {l.split("le=")[0] for l in body.splitlines() if l.startswith(family)}
        if len(keys) >= expected:
            break
        if time.monotonic() > deadline:
            sys.exit(f"only {len(keys)} series of {expected} for {name}")
        time.sleep(0.2)
    times = []
    for _ in range(args.runs):
        ms, body = scrape(url)
        samples = sum(1 for l in body.splitlines() if l and not l.startswith("#"))
        times.append(ms)
    open(done, "w").close()
    dt.wait(timeout=60)
    times.sort()
    print(f"| {name} | {samples} | {len(body) / 1024:.0f} | {statistics.median(times):.1f} "
          f"| {times[int(len(times) * 0.9) - 1]:.1f} | {times[-1]:.1f} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/prometheus_scrape.py: needs root")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "calls.c")
        exe = os.path.join(tmp, "calls")
        with open(src, "w") as f:
            f.write(PROGRAM)
        subprocess.run(["gcc", "-O1", "-o", exe, src], check=True)
        print(f"{args.series} keys, {args.runs} scrapes each, `{os.uname().release}`, "
              f"{os.cpu_count()} CPUs\n")
        print("| aggregation | samples served | size (KiB) | median (ms) | p90 (ms) | max (ms) |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, action, family in CASES:
            run_case(args, exe, tmp, name, action, family)


if __name__ == "__main__":
    main()
