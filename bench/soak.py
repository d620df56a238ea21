#!/usr/bin/env python3
"""Long-run soak of `dtrace -x prometheus` (issue 13): memory over time with a churning
key set, targets coming and going, and a scrape every second.

This is a benchmark, not a test: it asserts nothing about the numbers. It needs root and
a built `target/release/dtrace` (or --dtrace PATH).

What runs:

  dtrace -x prometheus=127.0.0.1:0 -x promlabels=on:comm,stack -s SCRIPT   (SCRIPT below)

while a load thread starts short-lived processes (`sh -c 'head -c 4096 /dev/urandom |
cat > /dev/null'`, --rate per second), each a new pid with new user stacks, read and
write keys; a scraper GETs /metrics every second. Every --every seconds it records the
dtrace process's RSS (VmRSS), the series served, the scrape's size and time, and the
drops counted. `trunc()` keeps the top keys every 30 s, so keys churn all along.

Usage:
  python3 bench/soak.py [--duration 3600] [--every 60] [--rate 20] [--dtrace PATH]
                        [--no-stacks]

Prints a markdown table to stdout; progress to stderr.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from promserve import serve

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r"""
profile-197 /pid != 0/ { @on[execname, ustack()] = count(); }
syscall::read:entry, syscall::write:entry { @io[execname, pid, probefunc] = count(); }
syscall::read:entry, syscall::write:entry { @size[probefunc] = quantize(arg2); }
tick-30s { trunc(@on, 1000); trunc(@io, 1000); }
"""


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=3600)
    ap.add_argument("--every", type=float, default=60)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--no-stacks", action="store_true",
                    help="leave out the profile clause (@on, user stacks), to compare")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/soak.py: needs root")
    script = f"/tmp/dtrace-soak-{os.getpid()}.d"
    text = SCRIPT
    if args.no_stacks:
        text = "\n".join(l for l in SCRIPT.splitlines() if "@on[" not in l)
        text = text.replace("trunc(@on, 1000); ", "")
    with open(script, "w") as f:
        f.write(text)
    dt, url = serve(
        [args.dtrace, "-q", "-x", "prometheus=127.0.0.1:0"]
        + ([] if args.no_stacks else ["-x", "promlabels=on:comm,stack"]) + ["-s", script],
        "bench/soak.py")
    threading.Thread(target=lambda: [None for _ in dt.stderr], daemon=True).start()

    stop = threading.Event()
    started = [0]

    def load():
        period = 1.0 / args.rate
        running = []
        while not stop.is_set():
            running.append(subprocess.Popen(
                ["sh", "-c", "head -c 4096 /dev/urandom | cat > /dev/null"]))
            started[0] += 1
            running = [p for p in running if p.poll() is None]
            time.sleep(period)

    last = {"ms": 0.0, "bytes": 0, "series": 0, "drops": 0, "errors": 0}

    def scrape():
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                body = urllib.request.urlopen(url, timeout=10).read().decode()
            except OSError:
                last["errors"] += 1
                time.sleep(1)
                continue
            last["ms"] = (time.perf_counter() - t0) * 1000
            last["bytes"] = len(body)
            lines = [l for l in body.splitlines() if l and not l.startswith("#")]
            last["series"] = len(lines)
            last["drops"] = sum(int(l.rsplit(" ", 1)[1]) for l in lines
                                if l.startswith("dtrace_drops_total"))
            time.sleep(1)

    threading.Thread(target=load, daemon=True).start()
    threading.Thread(target=scrape, daemon=True).start()
    print("| minutes | RSS (MiB) | processes started | samples served | scrape (KiB) | scrape (ms) | drops |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    start = time.monotonic()
    while time.monotonic() - start < args.duration and dt.poll() is None:
        time.sleep(args.every)
        row = (f"| {(time.monotonic() - start) / 60:.0f} | {rss_kib(dt.pid) / 1024:.1f} | {started[0]} "
               f"| {last['series']} | {last['bytes'] / 1024:.0f} | {last['ms']:.1f} | {last['drops']} |")
        print(row, flush=True)
        print(row, file=sys.stderr, flush=True)
    stop.set()
    alive = dt.poll() is None
    # SIGTERM, not SIGINT: started in the background, this script and its children may
    # have SIGINT ignored.
    dt.send_signal(signal.SIGTERM)
    dt.wait(timeout=120)
    print(f"\ndtrace ran to the end: {alive}; exit status after SIGTERM: {dt.returncode}; "
          f"failed scrapes: {last['errors']}")


if __name__ == "__main__":
    main()
