#!/usr/bin/env python3
"""Per-fire overhead of user probes: USDT sites of three kinds and a `pid` entry probe,
untraced, traced by our `dtrace` and traced by `bpftrace`, with the same counting script,
in one run.

This is a benchmark, not a test. It needs root, gcc with <sys/sdt.h> (Debian package
systemtap-sdt-dev), rustc, `bpftrace` on PATH and a built `target/release/dtrace`
(`cargo build --release -p dtrace`). A missing tool is an error, never a silent skip.

Each workload fires one probe `bench:::hit` (two integer arguments) N times in a tight
loop and reports the loop's own CPU time (CLOCK_PROCESS_CPUTIME_ID: what the kernel does on
the process's behalf, uprobe traps and the BPF programs they run included; time spent
waiting for a CPU excluded, which keeps the numbers steady on a shared machine), so
start-up and attach costs of the tracers are excluded. Cost per fire is (traced loop time
- untraced loop time) / N. The sites:

  sys/sdt.h     DTRACE_PROBE2(bench, hit, i, n): systemtap's site, a 1-byte nop, which a
                uprobe takes through an int3 trap
  dtrace -h     BENCH_HIT(i, n) from the header `dtrace -h` writes (linked with the
                `dtrace -G` object): a 5-byte nop, which kernels with optimized uprobes
                (6.18 here) turn into a call through the [uprobes-trampoline]
  dtrace-usdt   dtrace_usdt::probe!(bench, hit, i, n) in a Rust program (crates/usdt): a
                semaphore test, then a 5-byte nop
  pid entry     no USDT site: `pid$target:a.out:work:entry` on a function the loop calls,
                whose first instruction is `push %rbp` (bpftrace: `uprobe:PROG:work`)

Configurations, each run --runs times, interleaved:

  untraced              the program alone
  dtrace count          dtrace -qn 'bench$target:::hit { @ = count(); }' -c PROG
                        (a pid is named and the probe has one site: a per-process
                        perf-event uprobe)
  dtrace count, by path dtrace -qn 'bench*:PROG::hit { @ = count(); }' -c PROG
                        (system-wide: a uprobe_multi link without a pid; sys/sdt.h only)
  bpftrace count        bpftrace -e 'usdt:PROG:bench:hit { @ = count(); }' -c PROG
  bpftrace empty        bpftrace -e 'usdt:PROG:bench:hit { }' -c PROG   (the uprobe floor:
                        an empty program on the same probe; sys/sdt.h only)

Every count is checked against N (so bpftrace is seen attaching to the 5-byte sites too).
Every configuration runs under `setarch -R` (no address-space randomisation): with it,
the per-fire cost of a uprobe on this VM is bimodal from run to run (≈ 460 or ≈ 680 ns,
depending on where the stack and the uprobe trampoline page land), whatever the tracer.
There is no "dtrace empty" row: an empty D clause is not an empty program (it records
the probe's default trace output on every fire).

Usage: python3 bench/usdt_overhead.py [--fires 2000000] [--runs 5] [--dtrace PATH]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
%(include)s

%(before)s

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long i = 0; i < n; i++)
        %(site)s;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    printf("LOOP_NS %%lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
"""

# The sys/sdt.h workload (also used by bench/scale.py).
PROGRAM = LOOP % {"include": "#include <sys/sdt.h>", "before": "",
                  "site": "DTRACE_PROBE2(bench, hit, i, n)"}

HEADER_PROGRAM = LOOP % {"include": '#include "bench.h"', "before": "",
                         "site": "BENCH_HIT(i, n)"}

PID_PROGRAM = LOOP % {
    "include": "",
    "before": "__attribute__((noinline)) long work(long i, long n) "
              "{ __asm__ volatile(\"\" ::: \"memory\"); return i + n; }",
    "site": "work(i, n)"}

PROVIDER = "provider bench { probe hit(long, long); };\n"

RUST_PROGRAM = r"""
#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// This process's CPU time (CLOCK_PROCESS_CPUTIME_ID), in ns.
fn cpu_ns() -> i64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    unsafe { clock_gettime(2, &mut ts) };
    ts.sec * 1_000_000_000 + ts.nsec
}

fn main() {
    let n: u64 = std::env::args().nth(1).map_or(1_000_000, |a| a.parse().expect("N"));
    let t = cpu_ns();
    for i in 0..n {
        dtrace_usdt::probe!(bench, hit, i, n);
    }
    println!("LOOP_NS {}", cpu_ns() - t);
}
"""

SDT, HEADER, CRATE, PID = "sys/sdt.h", "dtrace -h", "dtrace-usdt", "pid entry"


def die(msg, code=2):
    print("bench/%s: error: %s" % (os.path.basename(sys.argv[0]), msg), file=sys.stderr)
    sys.exit(code)


def check_tools(dtrace, bpftrace):
    """Stop unless this runs as root with a built dtrace and bpftrace installed."""
    if os.geteuid() != 0:
        die("must run as root (the tracers load BPF programs)")
    if not os.path.exists(dtrace):
        die("no dtrace at %s: run cargo build --release -p dtrace" % dtrace)
    if not bpftrace:
        die("bpftrace not found: apt-get install bpftrace")


def run(argv, what, cwd=None):
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    if out.returncode != 0:
        die("%s failed: %s\n%s" % (what, " ".join(argv), out.stderr))
    return out.stdout


def loop_ns(argv, count=None):
    """Run argv; return the LOOP_NS the workload printed. With `count`, the tracer's
    output must also hold that count (`@ = count()` as dtrace or bpftrace prints it)."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"LOOP_NS (\d+)", out.stdout)
    if out.returncode != 0 or not m:
        die("run failed: %s\nstdout: %s\nstderr: %s" % (" ".join(argv), out.stdout, out.stderr), 1)
    if count is not None and not re.search(r"(^\s+|@: )%d$" % count, out.stdout, re.M):
        die("%s: no count of %d in:\n%s" % (" ".join(argv), count, out.stdout), 1)
    return int(m.group(1))


def build_c(work, name, source, extra=()):
    src = os.path.join(work, name + ".c")
    exe = os.path.join(work, name)
    with open(src, "w") as f:
        f.write(source)
    run(["gcc", "-O2", "-o", exe, src] + list(extra), "gcc (is systemtap-sdt-dev installed?)")
    return exe


def build_header_site(work, dtrace):
    """The loop on a `dtrace -h` site, built the DTrace way (-h, compile, -G, link)."""
    with open(os.path.join(work, "bench.d"), "w") as f:
        f.write(PROVIDER)
    with open(os.path.join(work, "hdr.c"), "w") as f:
        f.write(HEADER_PROGRAM)
    run([dtrace, "-h", "-s", "bench.d"], "dtrace -h", cwd=work)
    run(["gcc", "-O2", "-c", "hdr.c"], "gcc -c", cwd=work)
    run([dtrace, "-G", "-s", "bench.d", "hdr.o"], "dtrace -G", cwd=work)
    run(["gcc", "-o", "hdr", "hdr.o", "bench.o"], "gcc (link)", cwd=work)
    return os.path.join(work, "hdr")


def build_crate_site(work):
    """The loop on a dtrace-usdt site, built with rustc against crates/usdt. Linked without
    RELRO: in this binary's default layout the semaphore's file page is also the last page
    of the RELRO segment, and a process held right after exec (as bpftrace's `-c` holds
    it, and dtrace's with `-x evaltime=exec`) has that page mapped writable twice; the
    kernel bumps the semaphore through the first mapping (`find_ref_ctr_vma`), the wrong
    address, so `probe!` never reaches its site (docs/BENCHMARKS.md)."""
    rlib = os.path.join(work, "libdtrace_usdt.rlib")
    run(["rustc", "--edition", "2021", "-O", "--crate-type", "rlib", "--crate-name",
         "dtrace_usdt", "-o", rlib, os.path.join(REPO, "crates/usdt/src/lib.rs")],
        "rustc (dtrace-usdt)")
    src = os.path.join(work, "crate.rs")
    with open(src, "w") as f:
        f.write(RUST_PROGRAM)
    exe = os.path.join(work, "crate")
    run(["rustc", "--edition", "2021", "-O", "-C", "link-arg=-Wl,-z,norelro",
         "--extern", "dtrace_usdt=" + rlib, "-o", exe, src], "rustc (workload)")
    return exe


def build(work, dtrace):
    """Every workload: {site: executable}."""
    return {
        SDT: build_c(work, "sdt", PROGRAM),
        HEADER: build_header_site(work, dtrace),
        CRATE: build_crate_site(work),
        # -O0: `work` starts with `push %rbp`, as functions built with frame pointers do,
        # which the kernel emulates; a first instruction it must single-step out of line
        # (this `work` at -O2 starts with `lea`) costs about 20 us per fire here.
        PID: build_c(work, "pid", PID_PROGRAM, ["-O0"]),
    }


def configs(site, prog, fires, dtrace, bpftrace):
    """(name, argv, expected count) of each configuration measured on `site`."""
    cmd = "%s %d" % (prog, fires)
    if site == PID:
        return [
            ("untraced", [prog, str(fires)], None),
            ("dtrace count", [dtrace, "-q", "-n", "pid$target:a.out:work:entry { @ = count(); }",
                              "-c", cmd], fires),
            ("bpftrace count", [bpftrace, "-e", "uprobe:%s:work { @ = count(); }" % prog,
                                "-c", cmd], fires),
        ]
    rows = [
        ("untraced", [prog, str(fires)], None),
        ("dtrace count", [dtrace, "-q", "-n", "bench$target:::hit { @ = count(); }", "-c", cmd],
         fires),
        ("bpftrace count", [bpftrace, "-e", "usdt:%s:bench:hit { @ = count(); }" % prog,
                            "-c", cmd], fires),
    ]
    if site == SDT:
        rows += [
            ("dtrace count, by path",
             [dtrace, "-q", "-n", "bench*:%s::hit { @ = count(); }" % prog, "-c", cmd], fires),
            ("bpftrace empty", [bpftrace, "-e", "usdt:%s:bench:hit { }" % prog, "-c", cmd], None),
        ]
    return rows


def measure(dtrace, bpftrace, fires, runs):
    """Extra ns per fire: {(site, configuration): (loop median ns, extra ns per fire)}."""
    work = tempfile.mkdtemp(prefix="usdt-bench-")
    progs = build(work, dtrace)
    todo = [(site, name, argv, count)
            for site, prog in progs.items()
            for name, argv, count in configs(site, prog, fires, dtrace, bpftrace)]
    samples = {(site, name): [] for site, name, _, _ in todo}
    for r in range(runs):
        for site, name, argv, count in (todo if r % 2 == 0 else list(reversed(todo))):
            samples[(site, name)].append(loop_ns(["setarch", "-R"] + argv, count))
            print("run %d %s %s: %d ns" % (r, site, name, samples[(site, name)][-1]),
                  file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    result = {}
    for (site, name), v in samples.items():
        med = statistics.median(v)
        base = statistics.median(samples[(site, "untraced")])
        result[(site, name)] = (med, (med - base) / fires)
    return result


def report(result, fires, runs):
    """Markdown tables: every configuration, then the 5-byte sites against sys/sdt.h's."""
    print("| site | configuration | loop median (ms) | ns per fire | extra ns per fire |")
    print("|---|---|---:|---:|---:|")
    for (site, name), (med, extra) in result.items():
        print("| %s | %s | %.1f | %.1f | %.1f |" % (site, name, med / 1e6, med / fires, extra))
    print()
    print("| extra per fire, against the sys/sdt.h site's (same tracer, same run) | dtrace | bpftrace |")
    print("|---|---:|---:|")
    for site in (HEADER, CRATE, PID):
        ratios = [result[(site, t + " count")][1] / result[(SDT, t + " count")][1]
                  for t in ("dtrace", "bpftrace")]
        print("| %s | %.3f | %.3f |" % (site, ratios[0], ratios[1]))
    print()
    print("%d fires per run, %d runs each, medians; extra = traced minus untraced." % (fires, runs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fires", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dtrace", default=os.path.join(REPO, "target/release/dtrace"))
    ap.add_argument("--bpftrace", default=shutil.which("bpftrace"))
    args = ap.parse_args()
    check_tools(args.dtrace, args.bpftrace)
    report(measure(args.dtrace, args.bpftrace, args.fires, args.runs), args.fires, args.runs)


if __name__ == "__main__":
    main()
