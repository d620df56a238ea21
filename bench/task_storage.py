#!/usr/bin/env python3
"""What a thread-local variable costs in a BPF hash map keyed by thread id against the
thread's task local storage (BPF_MAP_TYPE_TASK_STORAGE), by the kernel's own run time per
run of hand-assembled programs on raw_syscalls:sys_enter (codegen/tls.rs chose from these).

A benchmark, not a test, independent of dtrace: each program does on every system call
what a store, a load and a delete of one variable (8 bytes, or a 256-byte string) do, or
one `self->ts` entry/return pair with the dynvarsize count; a workload makes --calls
getppid() calls per run. The figures include the statistics' own two clock reads
(the `empty` row). Then it loads the task storage program as each program type dtrace
attaches, to show which accept bpf_get_current_task_btf and bpf_task_storage_get.

Needs root, gcc and bpftool. Usage: python3 bench/task_storage.py [--calls N] [--runs N]
"""

import argparse
import ctypes
import json
import os
import statistics
import struct
import subprocess
import tempfile

libc = ctypes.CDLL(None, use_errno=True)
NR_BPF = 321  # x86-64
KEEP = []  # buffers whose addresses the kernel is given


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    r = libc.syscall(NR_BPF, cmd, buf, len(attr))
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return r


def addr(b):
    cb = ctypes.create_string_buffer(b, len(b))
    KEEP.append(cb)
    return ctypes.addressof(cb)


def btf_load(value_size):
    """[1] int, [2] unsigned char, [3] unsigned char[value_size]: a task storage map's."""
    strings = b"\0int\0unsigned char\0"
    types = struct.pack("<4I", 1, 1 << 24, 4, (1 << 24) | 32)
    types += struct.pack("<4I", 5, 1 << 24, 1, 8)
    types += struct.pack("<6I", 0, 3 << 24, 0, 2, 1, value_size)
    blob = struct.pack("<HBBIIIII", 0xeb9f, 1, 0, 24, 0, len(types), len(types),
                       len(strings)) + types + strings
    return bpf(18, struct.pack("<QQIII", addr(blob), 0, len(blob), 0, 0))


def map_create(kind, key, value, entries, flags=0, btf=0):
    ids = (1, 3) if btf else (0, 0)
    return bpf(0, struct.pack("<7I16s5I", kind, key, value, entries, flags, 0, 0, b"x", 0,
                              btf, *ids, 0))


HASH, ARRAY, TASK_STORAGE = 1, 2, 29


def insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def ld_map(dst, fd): return insn(0x18, dst, 1, 0, fd) + insn(0)
def mov(d, s): return insn(0xbf, d, s)
def movi(d, i): return insn(0xb7, d, 0, 0, i)
def addi(d, i): return insn(0x07, d, 0, 0, i)
def call(h): return insn(0x85, 0, 0, 0, h)
def stx(d, off, s): return insn(0x7b, d, s, off)
def ldx(d, s, off): return insn(0x79, d, s, off)
def st(d, off, imm): return insn(0x7a, d, 0, off, imm)
def skip_if_zero(r, body): return insn(0x15, r, 0, len(body) // 8, 0) + body


EXIT = movi(0, 0) + insn(0x95)
LOOKUP, UPDATE, DELETE, PID_TGID = 1, 2, 3, 14
TS_GET, TS_DELETE, TASK_BTF = 156, 157, 158


def tid_key():
    return call(PID_TGID) + stx(10, -8, 0)


def hash_cycle(m, size):
    """update (value from the stack), lookup and load, delete."""
    p = tid_key() + b"".join(st(10, -8 - size + i, 7) for i in range(0, size, 8))
    p += ld_map(1, m) + mov(2, 10) + addi(2, -8) + mov(3, 10) + addi(3, -8 - size)
    p += movi(4, 0) + call(UPDATE)
    p += tid_key() + ld_map(1, m) + mov(2, 10) + addi(2, -8) + call(LOOKUP)
    p += skip_if_zero(0, ldx(6, 0, 0))
    p += tid_key() + ld_map(1, m) + mov(2, 10) + addi(2, -8) + call(DELETE)
    return p + EXIT


def task_get(m, create):
    return call(TASK_BTF) + mov(2, 0) + ld_map(1, m) + movi(3, 0) + movi(4, create) + call(TS_GET)


def task_cycle(m, size, delete):
    """get (create) and store, get and load, then delete the storage or store zeros."""
    p = b"".join(st(10, -size + i, 7) for i in range(0, size, 8))
    p += task_get(m, 1) + skip_if_zero(0, b"".join(ldx(1, 10, -size + i) + stx(0, i, 1)
                                                   for i in range(0, size, 8)))
    p += task_get(m, 0) + skip_if_zero(0, ldx(6, 0, 0))
    if delete:
        p += call(TASK_BTF) + mov(2, 0) + ld_map(1, m) + call(TS_DELETE)
    else:
        p += task_get(m, 0) + skip_if_zero(0, b"".join(st(0, i, 0) for i in range(0, size, 8)))
    return p + EXIT


def count(g, v):
    """atomically add v to the u64 in array g (the dynvarsize count)."""
    p = st(10, -16, 0) + ld_map(1, g) + mov(2, 10) + addi(2, -16) + call(LOOKUP)
    return p + skip_if_zero(0, movi(1, v) + insn(0xdb, 0, 1, 0, 0x01))


def hash_pair(h, g):
    """today's self->ts pair with the count: update(EXIST) fails, take a place,
    update(NOEXIST); lookup and load; delete and give the place back."""
    def update(flags):
        return ld_map(1, h) + mov(2, 10) + addi(2, -8) + mov(3, 10) + addi(3, -24) + \
            movi(4, flags) + call(UPDATE)
    p = tid_key() + st(10, -24, 5) + update(2) + count(g, 1) + update(1)
    p += tid_key() + ld_map(1, h) + mov(2, 10) + addi(2, -8) + call(LOOKUP)
    p += skip_if_zero(0, ldx(6, 0, 0))
    p += tid_key() + ld_map(1, h) + mov(2, 10) + addi(2, -8) + call(DELETE) + count(g, -1)
    return p + EXIT


def task_pair(t, g, counted):
    """the same pair in task storage: get (create) and store, get, load and store 0."""
    p = task_get(t, 1) + skip_if_zero(0, movi(1, 5) + stx(0, 0, 1))
    p += count(g, 1) if counted else b""
    p += task_get(t, 0) + skip_if_zero(0, ldx(6, 0, 0) + st(0, 0, 0))
    p += count(g, -1) if counted else b""
    return p + EXIT


def prog_load(insns, ptype=17, attach=0, flags=0, btf_id=0):
    lic = b"GPL\0"
    attr = struct.pack("<IIQQIIQII16sIIIIQIIQII", ptype, len(insns) // 8, addr(insns),
                       addr(lic), 0, 0, 0, 0, flags, b"tls", 0, attach, 0, 0, 0, 0, 0, 0, 0,
                       btf_id)
    return bpf(5, attr)


def ns_per_run(insns, workload, calls):
    fd = prog_load(insns)
    link = bpf(17, struct.pack("<QI4x", addr(b"sys_enter\0"), fd))
    subprocess.run([workload, str(calls)], check=True)
    info = ctypes.create_string_buffer(256)
    bpf(15, struct.pack("<IIQ", fd, 256, ctypes.addressof(info)))
    pid = struct.unpack_from("<I", info.raw, 4)[0]
    out = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(pid)],
                         stdout=subprocess.PIPE, check=True, text=True).stdout
    stats = json.loads(out)
    os.close(link)
    os.close(fd)
    return stats["run_time_ns"] / stats["run_cnt"]


WORKLOAD = r"""
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(int c, char **v) { long n = atol(v[1]); for (long i = 0; i < n; i++) syscall(SYS_getppid); return 0; }
"""


def vmlinux_type(name):
    out = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                         stdout=subprocess.PIPE, check=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("[") and ("'%s'" % name) in line:
            return int(line[1:line.index("]")])
    raise SystemExit("vmlinux BTF lacks %s" % name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="task-storage-")
    workload = os.path.join(work, "getppid")
    with open(workload + ".c", "w") as f:
        f.write(WORKLOAD)
    subprocess.run(["gcc", "-O2", "-o", workload, workload + ".c"], check=True)
    stats = bpf(32, struct.pack("<I", 0))  # BPF_ENABLE_STATS, until closed
    g = map_create(ARRAY, 4, 8, 1)
    progs = {"empty": EXIT}
    for size in (8, 256):
        h = map_create(HASH, 8, size, 10000, 1)
        t = map_create(TASK_STORAGE, 4, size, 0, 1, btf_load(size))
        progs["hash %d B: update, lookup, delete" % size] = hash_cycle(h, size)
        progs["task %d B: get+store, get+load, delete" % size] = task_cycle(t, size, True)
        progs["task %d B: get+store, get+load, get+zero" % size] = task_cycle(t, size, False)
    h = map_create(HASH, 8, 8, 10000, 1)
    t = map_create(TASK_STORAGE, 4, 8, 0, 1, btf_load(8))
    progs["self->ts pair, hash, counted"] = hash_pair(h, g)
    progs["self->ts pair, task"] = task_pair(t, g, False)
    progs["self->ts pair, task, counted"] = task_pair(t, g, True)
    samples = {name: [] for name in progs}
    for _ in range(args.runs):
        for name, insns in progs.items():
            samples[name].append(ns_per_run(insns, workload, args.calls))
    os.close(stats)
    print("| program | ns per run (median of %d) |" % args.runs)
    print("|---|---:|")
    for name, v in samples.items():
        print("| %s | %.1f |" % (name, statistics.median(v)))
    print()
    sched_switch = vmlinux_type("btf_trace_sched_switch")
    kinds = [("raw_tracepoint", {}), ("tracepoint", {"ptype": 5}),
             ("tp_btf", {"ptype": 26, "attach": 23, "btf_id": sched_switch}),
             ("kprobe/uprobe", {"ptype": 2}), ("uprobe_multi", {"ptype": 2, "attach": 48}),
             ("sleepable uprobe_multi", {"ptype": 2, "attach": 48, "flags": 16}),
             ("perf_event", {"ptype": 7})]
    for name, kw in kinds:
        try:
            os.close(prog_load(task_pair(t, g, True), **kw))
            print("%s: accepts task storage" % name)
        except OSError as e:
            print("%s: REFUSES task storage (%s)" % (name, e))


if __name__ == "__main__":
    main()
