#!/usr/bin/env python3
"""Start-up latency benchmark: our `dtrace` against `bpftrace`, in the same run.

This is a benchmark, not a test: nothing runs it from `cargo test`, and it
asserts nothing about the numbers (it only checks that each run printed the
BEGIN line and exited 0).  It needs root (both tools load BPF programs), a
built `target/release/dtrace` (`cargo build --release -p dtrace`) and
`bpftrace` on PATH (or --bpftrace PATH).  If a tool is missing it says so and
exits non-zero; it never skips silently.

For every run it measures, on the monotonic clock (time.perf_counter_ns):

  BEGIN  spawn -> first byte of the line printed by the BEGIN probe arriving
         on the stdout pipe (unbuffered os.read on the raw pipe fd);
  exit   spawn -> the process has exited and been reaped (waitpid).

The programs are the minimal "BEGIN, print, exit" one-liners:

  dtrace   -qn 'BEGIN { printf("BEGIN_FIRED\\n"); exit(0); }'
  bpftrace -e  'BEGIN { printf("BEGIN_FIRED\\n"); exit(); }'

Tools are interleaved run by run, and the order is flipped every round, so
both see the same machine conditions.  A spawn-floor baseline
(`/bin/echo BEGIN_FIRED`, measured the same way) shows the fixed cost of
fork/exec plus the measurement itself.

Usage:
  python3 bench/startup.py [--runs 30] [--warmup 3] [--dtrace PATH]
                           [--bpftrace PATH] [--no-baseline] [--json FILE]

Prints a markdown report (machine, versions, table) to stdout; progress goes
to stderr.  Exit status: 0 on success, 2 on setup errors (missing tool, not
root), 1 if a run misbehaved (no BEGIN line, non-zero exit status).
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

MARKER = b"BEGIN_FIRED"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(msg, code=2):
    print("bench/startup.py: error: " + msg, file=sys.stderr)
    sys.exit(code)


def run_once(argv):
    """Spawn argv once.

    Returns (rc, stdout_bytes, begin_ns or None, exit_ns), times relative to
    the instant just before the spawn.  stdin is /dev/null, stderr is
    discarded (bpftrace prints an RLIMIT_MEMLOCK warning on this machine),
    stdout is a pipe read unbuffered in the parent.
    """
    r, w = os.pipe()
    try:
        t0 = time.perf_counter_ns()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=w,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
    except BaseException:
        os.close(r)
        os.close(w)
        raise
    os.close(w)
    buf = bytearray()
    chunks = []  # (offset of the chunk's first byte, arrival time)
    begin = None
    try:
        while True:
            chunk = os.read(r, 65536)
            now = time.perf_counter_ns()
            if not chunk:
                break
            if begin is None:
                chunks.append((len(buf), now))
                buf += chunk
                idx = buf.find(MARKER)
                if idx >= 0:
                    # arrival time of the chunk holding the marker's 1st byte
                    begin = max(t for off, t in chunks if off <= idx) - t0
            else:
                buf += chunk
    finally:
        os.close(r)
    rc = proc.wait()
    t_exit = time.perf_counter_ns() - t0
    return rc, bytes(buf), begin, t_exit


def pct(sorted_vals, p):
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_vals:
        return float("nan")
    k = max(0, min(len(sorted_vals) - 1, -(-p * len(sorted_vals) // 100) - 1))
    return sorted_vals[int(k)]


def summary(vals_ns):
    v = sorted(x / 1e6 for x in vals_ns)
    return {
        "min": v[0],
        "median": (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2,
        "p90": pct(v, 90),
        "max": v[-1],
    }


def first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "unknown (%s)" % e
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def measure(dtrace, bpftrace, runs, warmup, baseline=True):
    """Spawn each tool runs + warmup times, interleaved; (tools, samples, stats): the
    argv of each tool, its samples in ns and their summaries in ms."""
    echo = shutil.which("echo") or "/bin/echo"
    tools = [
        ("dtrace", [dtrace, "-qn", 'BEGIN { printf("BEGIN_FIRED\\n"); exit(0); }']),
        ("bpftrace", [bpftrace, "-e", 'BEGIN { printf("BEGIN_FIRED\\n"); exit(); }']),
    ]
    if baseline:
        tools.append(("spawn floor (`echo`)", [echo, "BEGIN_FIRED"]))

    samples = {name: {"begin": [], "exit": []} for name, _ in tools}
    total = warmup + runs
    failures = 0
    for i in range(total):
        order = tools if i % 2 == 0 else list(reversed(tools))
        for name, argv in order:
            rc, out, begin, t_exit = run_once(argv)
            if rc != 0 or begin is None:
                failures += 1
                print("run %d of %s misbehaved: exit status %d, BEGIN line %s, stdout %r"
                      % (i, name, rc, "seen" if begin is not None else "NOT seen", out[:200]),
                      file=sys.stderr)
                continue
            if i >= warmup:
                samples[name]["begin"].append(begin)
                samples[name]["exit"].append(t_exit)
        print("round %d/%d%s" % (i + 1, total, " (warm-up)" if i < warmup else ""),
              file=sys.stderr, end="\r")
    print(file=sys.stderr)
    if failures:
        die("%d run(s) misbehaved, see above" % failures, code=1)
    stats = {name: {k: summary(v) for k, v in s.items()} for name, s in samples.items()}
    return tools, samples, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30, help="measured runs per tool (default 30)")
    ap.add_argument("--warmup", type=int, default=3, help="unmeasured runs per tool first (default 3)")
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target", "release", "dtrace"),
                    help="dtrace binary (default target/release/dtrace)")
    ap.add_argument("--bpftrace", default=None, help="bpftrace binary (default: from PATH)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the /bin/echo spawn floor")
    ap.add_argument("--json", metavar="FILE", help="also write raw samples (ms) to FILE")
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0:
        die("--runs must be >= 1 and --warmup >= 0")

    if not (os.path.isfile(args.dtrace) and os.access(args.dtrace, os.X_OK)):
        die("dtrace binary not found at %s; run `cargo build --release -p dtrace` first"
            % args.dtrace)
    bpftrace = args.bpftrace or shutil.which("bpftrace")
    if not bpftrace or not os.access(bpftrace, os.X_OK):
        die("bpftrace not found (install it, e.g. `apt-get install -y bpftrace`, "
            "or pass --bpftrace PATH); this benchmark compares against it and "
            "will not run without it")
    if os.geteuid() != 0:
        die("must run as root: both tools load BPF programs")
    try:
        with open("/proc/loadavg") as f:
            loadavg = " ".join(f.read().split()[:3])
    except OSError:
        loadavg = "unknown"
    tools, samples, stats = measure(args.dtrace, bpftrace, args.runs, args.warmup,
                                    not args.no_baseline)

    print("## Start-up latency: dtrace vs bpftrace\n")
    print("- command: `python3 bench/startup.py%s`" % "".join(
        " " + a for a in sys.argv[1:]))
    print("- runs: %d measured per tool after %d warm-up, interleaved, order flipped each round"
          % (args.runs, args.warmup))
    print("- machine: %d CPUs, %s, kernel %s"
          % (os.cpu_count() or 0, cpu_model(), platform.release()))
    print("- dtrace: `%s` (%s)" % (os.path.relpath(args.dtrace, REPO)
                                   if args.dtrace.startswith(REPO) else args.dtrace,
                                   first_line([args.dtrace, "-V"])))
    print("- bpftrace: `%s` (%s)" % (bpftrace, first_line([bpftrace, "--version"])))
    print("- python: %s" % platform.python_version())
    print("- load average at start: %s" % loadavg)
    print()
    print("| tool | measure | min ms | median ms | p90 ms | max ms |")
    print("|---|---|---:|---:|---:|---:|")
    labels = {"begin": "spawn → BEGIN fired", "exit": "spawn → exit"}
    for name, _ in tools:
        for k in ("begin", "exit"):
            s = stats[name][k]
            print("| %s | %s | %.2f | %.2f | %.2f | %.2f |"
                  % (name, labels[k], s["min"], s["median"], s["p90"], s["max"]))
    print()
    print("| ratio dtrace / bpftrace | min | median | p90 |")
    print("|---|---:|---:|---:|")
    for k in ("begin", "exit"):
        d, b = stats["dtrace"][k], stats["bpftrace"][k]
        print("| %s | %.3f | %.3f | %.3f |"
              % (labels[k], d["min"] / b["min"], d["median"] / b["median"],
                 d["p90"] / b["p90"]))
    print()
    for k in ("begin", "exit"):
        met = stats["dtrace"][k]["median"] <= stats["bpftrace"][k]["median"] / 10
        print("- goal, dtrace median %s at most 1/10 of bpftrace's: %s"
              % (labels[k], "met" if met else "NOT met"))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"argv": {n: a for n, a in tools},
                       "samples_ms": {n: {k: [x / 1e6 for x in v] for k, v in s.items()}
                                      for n, s in samples.items()},
                       "stats_ms": stats}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
