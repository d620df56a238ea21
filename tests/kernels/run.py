#!/usr/bin/env python3
"""The kernel matrix: dtrace's tests in Debian's stock kernels, booted under qemu (TCG).

    tests/kernels/run.py [--kernels 6.1,6.12,host] [--tests fbt,pid] [--dtrace PATH]

Downloads each kernel's package once (cached in ~/.cache/dtrace-kernels, or
$DTRACE_KERNELS_CACHE), builds an initramfs with busybox, the release `dtrace` (built here
unless --dtrace names one) with its libraries, the static test program tprog.c and one
script per test, boots the kernel under qemu in software emulation and reads each test's
output and status from the serial console; `host` runs the same scripts on this machine.
Prints pass/fail per test per kernel and the wall time per kernel; exits 1 if any test
failed (or a kernel did not boot, or said nothing), 0 otherwise. Needs root, qemu-system-x86,
busybox-static, cpio, gcc and sys/sdt.h (systemtap-sdt-dev).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# name -> the Debian meta-package that depends on the newest such kernel image.
KERNELS = {
    "6.1": "linux-image-cloud-amd64",
    "6.12": "linux-image-6.12-cloud-amd64",
}
# The generic flavours, whose 9p modules (in the package) let --conformance share this
# machine's files with the guest.
GENERIC = {"6.1": "linux-image-amd64", "6.12": "linux-image-6.12-amd64"}
# (with the modules they depend on, where the kernel has them as modules: 6.1's virtio).
NINEP_MODULES = ["virtio_pci", "9pnet_virtio", "9p"]
# Loaded in every guest, for fbt probes of a module (no dependencies).
TEST_MODULES = ["fs/binfmt_misc"]

CAT = "cat /etc/hostname"

# Each test: a shell command run with $T the test directory (tprog is there) and dtrace on
# PATH; `expect`, a regular expression its output (stdout and stderr) must contain; `rc`,
# its exit status (default 0); `on`, per-kernel replacements of those ("host": this
# machine, whose kernel has neither kprobes nor fentry).
NO_REMAIN_CPU = {"expect": r"sched:::remain-cpu fires on the kernel's sched_exit_tp tracepoint, which this kernel lacks",
                 "rc": 1}
SKIPS = {"expect": r"dtrace: \d+ fbt probes skipped, the kernel cannot trace their functions \(.*\)\n(.*\n)*vfs_read [1-9]"}
NO_FBT = {"expect": r"this kernel refuses the fentry/fexit BPF programs", "rc": 1}
TESTS = [
    {"name": "begin", "group": "core",
     "cmd": "dtrace -qn 'BEGIN { printf(\"hello %d\\n\", 6 * 7); exit(0); }'",
     "expect": r"hello 42"},
    {"name": "predicate", "group": "core",
     "cmd": "dtrace -qn 'syscall::write:entry /pid == $target/ { @ = count(); }"
            " END { printa(\"writes %@d\\n\", @); }' -c \"$T/tprog 3\"",
     "expect": r"writes [3-9]"},
    {"name": "syscall-args", "group": "core",
     "cmd": "dtrace -qn 'syscall::openat:entry /pid == $target/ { printf(\"open %s\\n\", copyinstr(arg1)); }'"
            f" -c '{CAT}'",
     "expect": r"open /etc/hostname"},
    {"name": "keys", "group": "core",
     "cmd": "dtrace -qn 'syscall:::entry /pid == $target && probefunc == \"write\"/"
            " { @[probefunc, execname] = count(); } profile-97 { @e[execname] = count(); }"
            " END { printa(\"%s %s %@d\\n\", @); }' -c \"$T/tprog 3\"",
     "expect": r"write tprog [3-9]"},
    {"name": "scratch-free", "group": "core",
     "cmd": "dtrace -qn 'syscall:::entry /pid == $target/ { @[probefunc] = count(); @c[execname] = count(); }"
            " END { printa(\"%s %@d\\n\", @); printa(\"%s %@d\\n\", @c); }' -c \"$T/tprog 3\"",
     "expect": r"(?s)write [3-9].*tprog [1-9]"},
    {"name": "profile", "group": "core",
     "cmd": "dtrace -qn 'profile-97 { @n = count(); } tick-1s { exit(0); }"
            " END { printa(\"samples %@d\\n\", @n); }'",
     "expect": r"samples [1-9]"},
    # cpc: kernel- and user-mode cpu-clock counters, with a shell loop spinning in user
    # mode; arg0 is the kernel PC alone, arg1 the user PC alone.
    {"name": "cpc", "group": "core",
     "cmd": "(i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done) & "
            "dtrace -qn 'cpc:::cpu_clock-kernel-1000000 { @k = count(); @bad = sum(arg0 == 0 || arg1 != 0); }"
            " cpc:::cpu_clock-user-1000000 { @u = count(); @bad = sum(arg0 != 0 || arg1 == 0); }"
            " tick-1s { exit(0); } END { printa(\"kernel %@d user %@d bad %@d\\n\", @k, @u, @bad); }';"
            " rc=$?; kill $! 2>/dev/null; exit $rc",
     "expect": r"kernel [1-9]\d* user [1-9]\d* bad 0\n"},
    {"name": "proc-exit", "group": "proc",
     "cmd": "dtrace -qn 'proc:::exit /pid == $target/ { printf(\"exit %d\\n\", args[0]); }' -c \"$T/tprog 1\"",
     "expect": r"exit 1"},
    {"name": "proc-exec", "group": "proc",
     "cmd": "dtrace -qn 'proc:::exec-success /execname == \"tprog\"/ { printf(\"exec %s\\n\", execname); exit(0); }'"
            " -c \"$T/tprog 1 exec\"",
     "expect": r"exec tprog"},
    {"name": "sched-off-cpu", "group": "sched",
     "cmd": "dtrace -qn 'sched:::off-cpu { @off = count(); } tick-1s { exit(0); } END { printa(\"off %@d\\n\", @off); }'",
     "expect": r"off [1-9]"},
    # 6.1 and 6.12 lack sched_exit_tp: on-cpu by a kprobe on finish_task_switch, and no
    # remain-cpu (said in one sentence).
    {"name": "sched-on-cpu", "group": "sched",
     "cmd": "dtrace -qn 'sched:::on-cpu { @on = count(); } tick-1s { exit(0); } END { printa(\"on %@d\\n\", @on); }'",
     "expect": r"on [1-9]"},
    # On the host: remain-cpu attaches and the run ends cleanly (it may not fire within the
    # second on a busy machine, so its count is not required).
    {"name": "sched-remain-cpu", "group": "sched", "on": {k: NO_REMAIN_CPU for k in ("6.1", "6.12")},
     "cmd": "dtrace -qn 'sched:::remain-cpu { @n = count(); } tick-1s { exit(0); } END { printf(\"remain %d\\n\", 0); printa(\"remain %@d\\n\", @n); }'",
     "expect": r"remain \d+"},
    {"name": "pid-entry", "group": "pid",
     "cmd": "dtrace -qn 'pid$target:a.out:work:entry { printf(\"entry %d\\n\", arg0); }' -c \"$T/tprog 3\"",
     "expect": r"entry 0\n(.*\n)*entry 2"},
    {"name": "pid-many", "group": "pid",
     "cmd": "dtrace -qn 'pid$target:a.out:fn*:entry { @[probefunc] = count(); }"
            " END { printa(\"%s %@d\\n\", @); }' -c \"$T/tprog 1\"",
     "expect": r"(fn\d 1\n(.*\n)*){10}"},
    {"name": "usdt", "group": "pid",
     "cmd": "dtrace -qn 'demo$target:::tick { printf(\"tick %d\\n\", arg0); }' -c \"$T/tprog 3\"",
     "expect": r"tick 0\n(.*\n)*tick 2"},
    # A string in a page the process never touched: read by a sleepable program where the
    # kernel has bpf_copy_from_user_str (6.12 on), an invalid address before.
    {"name": "usdt-untouched", "group": "pid",
     "on": {"6.1": {"expect": r"lacks bpf_copy_from_user_str for sleepable uprobe programs \(Linux 6.12 has it\)\n"
                              r"(.*\n)*dtrace: error .*invalid address"}},
     "cmd": "dtrace -v -qn 'demo$target:::file { printf(\"file %s\\n\", copyinstr(arg0)); }' -c \"$T/tprog 1\"",
     "expect": r"user memory read by a sleepable program \(untouched pages are faulted in\)\n(.*\n)*file untouched.h\n"},
    # The same for a system call's argument: where the kernel loads sleepable fentry
    # programs on system calls (their __x64_sys_ functions are on its error-injection list)
    # calling bpf_copy_from_user_str, the entry probe is one on __x64_sys_openat and reads
    # the path. Debian builds its kernels without that list (CONFIG_FUNCTION_ERROR_INJECTION
    # is not set), so there the probe stays a tracepoint, -v says why, and the read fails.
    {"name": "syscall-untouched", "group": "core",
     "on": {"6.1": {"expect": r"lacks bpf_copy_from_user_str for sleepable fentry programs \(Linux 6.12 has it\)\n"
                              r"(.*\n)*dtrace: error .*invalid address"},
            "6.12": {"expect": r"sleep only on the functions of its error-injection list, and it was built without one"
                               r" \(CONFIG_FUNCTION_ERROR_INJECTION\)\n(.*\n)*dtrace: error .*invalid address"},
            "host": {"expect": r"the kernel refuses fentry programs, which system calls would need to sleep .*\n"
                               r"(.*\n)*dtrace: error .*invalid address"}},
     "cmd": "dtrace -v -qn 'syscall::openat:entry /pid == $target/ { printf(\"open %s\\n\", copyinstr(arg1)); }'"
            " -c \"$T/tprog 1 open\"",
     "expect": r"user memory read by a sleepable fentry program on __x64_sys_openat \(untouched pages are faulted in\)\n"
               r"(.*\n)*open /etc/hostname\n"},
    # copyout()/copyoutstr() write the traced program's buffer before write() reads it (a
    # string longer than maxlen: its first maxlen bytes, no NUL): the 6.1 and 6.12 kernels
    # are not locked down; the host is, and dtrace says so.
    {"name": "copyout", "group": "core",
     "on": {"host": {"rc": 1, "expect": r"cannot run on this kernel: it forbids eBPF programs to write user memory"}},
     "cmd": "dtrace -wqn 'syscall::write:entry /pid == $target/ { copyoutstr(\"patched\", arg1, 7);"
            " this->b = (char *)alloca(2); this->b[0] = 88; this->b[1] = 89; copyout(this->b, arg1 + 7, 2); }'"
            f" -c '{CAT}'",
     "expect": r"patchedXYrix"},
    # Signed division and remainder of run-time values (6.1 has no signed division
    # instruction): C's quotient, DTrace's remainder with the quotient's sign.
    {"name": "signed-div", "group": "core",
     "cmd": "dtrace -qn 'BEGIN { a = 19; b = -5; c = -19; d = 5;"
            " printf(\"%d %d %d %d %d %d\\n\", c / d, c % d, a / b, a % b, c / b, c % b); exit(0); }'",
     "expect": r"-3 -4 -3 -4 3 4\n"},
    # A constant-size copy into alloca memory (6.12's verifier refused the bounds check once)
    # and chill() (6.1 has no may_goto; the spin is bpf_loop calls).
    {"name": "copyinto-const", "group": "core", "on": {"host": {"expect": r"got vm"}},
     "cmd": "dtrace -qn 'syscall::write:entry /pid == $target/ { this->p = (char *)alloca(4);"
            " copyinto(arg1, 4, this->p); printf(\"got %c%c%c%c\\n\", this->p[0], this->p[1], this->p[2], this->p[3]); }'"
            f" -c '{CAT}'",
     "expect": r"got kern"},
    {"name": "chill", "group": "core",
     "cmd": "dtrace -wqn 'BEGIN { chill(100000000); printf(\"chilled\\n\"); exit(0); }'",
     "expect": r"chilled"},
    # Run-time arguments: a copyinto() size computed by the probe (bounded for each
    # kernel's verifier), one that does not fit (DTrace's invalid size), a computed setopt().
    {"name": "runtime-args", "group": "core",
     "cmd": "dtrace -qn 'syscall::write:entry /pid == $target/ { this->p = (char *)alloca(16);"
            " copyinto(arg1, arg2 - 1, this->p); setopt(\"aggsortpos\", lltostr(arg2 - 7));"
            " printf(\"got %s|\\n\", stringof(this->p)); }"
            " syscall::write:entry /pid == $target/ { this->q = (char *)alloca(4); copyinto(arg1, arg2, this->q); }'"
            " -c \"$T/tprog 1\"",
     "expect": r"(?s)(?=.*got work 0\|\n)(?=.*invalid size \(0x7\))"},
    {"name": "usdt-glob", "group": "pid",
     "cmd": "dtrace -qn 'demo*:::tick { @[probemod] = count(); } END { printa(\"%s %@d\\n\", @); }' -c \"$T/tprog 2\"",
     "expect": r"tprog 2\n"},
    # A binary that starts running after tracing began (the exec watcher and, for its
    # libraries, the dlopen watcher): started every second until dtrace is done.
    {"name": "pid-later", "group": "pid",
     "cmd": "cp $T/tprog /tmp/tlater; rm -f /tmp/tlater.done;"
            " (i=0; while [ ! -e /tmp/tlater.done ] && [ $i -lt 60 ]; do /tmp/tlater 1 > /dev/null; sleep 1; i=$((i+1)); done) &"
            " dtrace -qn 'pid*:tlater:work:entry { printf(\"later %d\\n\", arg0); exit(0); }'; s=$?;"
            " touch /tmp/tlater.done; wait; exit $s",
     "expect": r"later 0\n"},
    {"name": "followfork", "group": "pid",
     "cmd": "dtrace -x followfork -qn 'pid$target:a.out:work:entry { printf(\"entry %d\\n\", arg0); }'"
            " -c \"$T/tprog 2 fork\"",
     "expect": r"entry 101\n(.*\n)*entry 1\n"},
    # entry-> (docs/ENTRY.md): a pid return, a system call's return and fbt returns (fexit,
    # kretprobes) read their entry's arguments.
    {"name": "pid-entry-args", "group": "entry",
     "cmd": "dtrace -qn 'pid$target:a.out:work:return { printf(\"work(%d) = %d\\n\", entry->arg0, arg1); }'"
            " -c \"$T/tprog 3\"",
     "expect": r"work\(0\) = 7\n(.*\n)*work\(2\) = 7\n"},
    {"name": "syscall-entry-args", "group": "entry",
     "cmd": "dtrace -qn 'syscall::openat:return /pid == $target && arg1 >= 0/"
            " { printf(\"opened %s %d\\n\", copyinstr(entry->args[1]), timestamp > entry->timestamp); }'"
            f" -c '{CAT}'",
     "expect": r"opened /etc/hostname 1\n"},
    # An fbt return traced by fexit: a companion fentry program saves the entry's state,
    # keyed by the thread and the trampoline frame the fentry and fexit programs share.
    {"name": "fbt-entry-args", "group": "entry", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::vfs_read:return /pid == $target && arg1 > 0/"
            " { printf(\"read %d of %d from %s %d\\n\", arg1, entry->arg2,"
            " stringof(entry->args[0]->f_path.dentry->d_name.name), timestamp > entry->timestamp); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"read 13 of [1-9]\d+ from hostname 1\n"},
    # Four threads' reads in flight at once, each finding its own entry (10 + t bytes asked,
    # t + 1 read, each blocked for 300 ms).
    {"name": "fbt-entry-threads", "group": "entry", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::vfs_read:return /pid == $target && entry->arg2 >= 10 && entry->arg2 <= 13/"
            " { @[entry->arg2] = sum(arg1); @slow = min(timestamp - entry->timestamp >= 200000000); }"
            " END { printa(\"%d %@d\\n\", @); printa(\"slow %@d\\n\", @slow); }' -c \"$T/tprog 1 threads\"",
     "expect": r"\n10 1\n11 2\n12 3\n13 4\nslow 1\n"},
    # Nested calls, each traced by fexit: ksys_read(fd, buf, count) calls vfs_read(file,
    # buf, count, pos), whose trampoline runs deeper in the stack, so each return finds its
    # own entry (ksys_read's arg0 a small fd, vfs_read's a kernel pointer).
    {"name": "fbt-entry-nested", "group": "entry", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::ksys_read:return,fbt::vfs_read:return /pid == $target && arg1 > 0/"
            " { printf(\"%s %d %d\\n\", probefunc, entry->arg0 >= 0 && entry->arg0 < 1000, entry->arg2); }'"
            f" -c '{CAT}'",
     "expect": r"\nvfs_read 0 (\d+)\nksys_read 1 \1\n"},
    # A glob of more than 8 functions: kprobes and kretprobes, keyed by the kernel stack.
    {"name": "fbt-glob-entry-args", "group": "entry", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt:vmlinux:vfs_*:return /pid == $target && probefunc == \"vfs_read\" && arg1 > 0/"
            " { printf(\"%s read %d of %d\\n\", probefunc, arg1, entry->arg2); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"vfs_read read 13 of [1-9]\d+\n"},
    # A per-CPU kernel variable, typed from BTF, found by the kernel through kallsyms (which
    # lists data symbols only with CONFIG_KALLSYMS_ALL, as Debian's kernels have and this
    # machine's has not).
    {"name": "percpu-variable", "group": "core",
     "on": {"host": {"expect": r"this kernel's symbol table does not list it", "rc": 1}},
     "cmd": "dtrace -qn 'BEGIN { printf(\"%d %d\\n\", `runqueues.cpu == cpu, `runqueues.curr == curthread); exit(0); }'",
     "expect": r"1 1\n"},
    # A symbol the kernel does not have (a Solaris one) is DTrace's "Unknown symbol name"
    # where the symbol table lists every symbol; on the host, which lists few data
    # symbols, only why it cannot be read is known.
    {"name": "unknown-symbol", "group": "core",
     "on": {"host": {"expect": r"failed to resolve `hp_avenrun: only per-CPU kernel variables", "rc": 1}},
     "cmd": "dtrace -qn 'BEGIN { trace(`hp_avenrun); exit(0); }'",
     "expect": r"failed to resolve `hp_avenrun: Unknown symbol name",
     "rc": 1},
    # Kernel symbols other than per-CPU variables: their address from kallsyms, read as the
    # type a cast names (the host lists no such data symbols). linux_banner is the
    # kernel's version line; jiffies grows between two firings 100 ms apart; an untyped
    # symbol reads as DTrace reads one its kernel's type data does not describe, as a
    # uintptr_t; writing one is refused.
    {"name": "ksym-banner", "group": "core",
     "on": {"host": {"expect": r"failed to resolve `linux_banner: only per-CPU kernel variables", "rc": 1}},
     "cmd": "dtrace -qn 'BEGIN { trace((string)&`linux_banner); exit(0); }'",
     "expect": r"Linux version \d+\.\d+"},
    {"name": "ksym-jiffies", "group": "core",
     "on": {"host": {"expect": r"failed to resolve `jiffies: only per-CPU kernel variables", "rc": 1}},
     "cmd": "dtrace -qn 'BEGIN { j = *(unsigned long *)&`jiffies; } tick-100ms { this->k = `jiffies;"
            " printf(\"%d %d %d\\n\", j != 0, this->k > j, sizeof (`jiffies)); exit(0); }'",
     "expect": r"1 1 8\n"},
    {"name": "ksym-write", "group": "core",
     "on": {"host": {"expect": r"failed to resolve `max_pfn: only per-CPU kernel variables", "rc": 1}},
     "cmd": "dtrace -qn 'BEGIN { `max_pfn = 0; }'",
     "expect": r"operator = can only be applied to a writable variable", "rc": 1},
    # A section bound every kernel's symbol table lists, the host's too: BTF's magic.
    {"name": "ksym-section", "group": "core",
     "cmd": "dtrace -qn 'BEGIN { printf(\"%x %a\\n\", *(unsigned short *)&`__start_BTF, &`__start_BTF); exit(0); }'",
     "expect": r"eb9f vmlinux`__start_BTF\n"},
    # ipl, as Oracle's DTrace for Linux has it (in_interrupt()): 0 in BEGIN (the dtrace
    # thread), non-zero in profile probes (a timer interrupt); read from the per-CPU
    # preempt count (__preempt_count on 6.1, pcpu_hot.preempt_count on 6.12).
    {"name": "ipl", "group": "core",
     "on": {"host": {"expect": r"ipl cannot be read on this kernel: .*CONFIG_KALLSYMS_ALL", "rc": 1}},
     "cmd": "dtrace -qn 'BEGIN { printf(\"%u\\n\", ipl); } profile-997 /ipl != 0/ { @ = count(); }"
            " tick-1s { printa(\"%@u\\n\", @); exit(0); }'",
     "expect": r"^0\n[1-9]\d*\n"},
    # The lock subroutines on a real kernel mutex: when mutex_lock() returns, the caller
    # holds the mutex it was given.
    {"name": "fbt-mutex-owned", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::mutex_lock:return { this->m = (struct mutex *)entry->arg0;"
            " printf(\"owned %d %d adaptive %d\\n\", mutex_owned(this->m), mutex_owner(this->m) == curthread,"
            " mutex_type_adaptive(this->m)); exit(0); }'",
     "expect": r"owned 1 1 adaptive 1\n"},
    {"name": "fbt-entry", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt:vmlinux:vfs_read:entry /pid == $target/ { printf(\"%s %d\\n\", probefunc, arg2 > 0); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"vfs_read 1"},
    {"name": "fbt-return", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::vfs_read:return /pid == $target && arg1 > 0/ { printf(\"returned %d\\n\", arg1); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"returned [1-9]"},
    # As Oracle's DTrace: arg0 and args[0] at a return are the return offset, unknown (-1).
    {"name": "fbt-return-offset", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::vfs_read:return /pid == $target && arg1 > 0/"
            " { printf(\"%x %x %d\\n\", arg0, args[0], args[1]); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"ffffffffffffffff ffffffffffffffff [1-9]"},
    # A void function's return has args[0] alone: a compile error everywhere.
    {"name": "fbt-void-return", "group": "fbt",
     "cmd": "dtrace -qn 'fbt:vmlinux:exit_creds:return { trace(args[1]); }'",
     "expect": r"index 1 is out of range for fbt:vmlinux:exit_creds:return args\[ \]", "rc": 1},
    {"name": "fbt-args", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::vfs_read:entry /pid == $target/"
            " { printf(\"file %s\\n\", stringof(args[0]->f_path.dentry->d_name.name)); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"file hostname"},
    {"name": "fbt-stack", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::vfs_read:entry /pid == $target/ { stack(); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"ksys_read"},
    # Debian's kernels have vfs_* functions fentry cannot take (6.1: some return a struct;
    # 6.12: __init code): skipped, in one line.
    {"name": "fbt-glob", "group": "fbt", "on": {"host": NO_FBT, **{k: SKIPS for k in ("6.1", "6.12")}},
     "cmd": "dtrace -qn 'fbt:vmlinux:vfs_*:entry /pid == $target/ { @[probefunc] = count(); }"
            " END { printa(\"%s %@d\\n\", @); }'"
            f" -c '{CAT}'",
     "expect": r"vfs_read [1-9]"},
    {"name": "fbt-glob-return", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt:vmlinux:vfs_*:return /pid == $target && probefunc == \"vfs_read\" && arg1 > 0/"
            " { printf(\"%s returned %d at %x\\n\", probefunc, arg1, args[0]); exit(0); }'"
            f" -c '{CAT}'",
     "expect": r"vfs_read returned 13 at ffffffffffffffff\n"},
    # A glob's args[] are typed per function, as in a probe of its own: its functions are
    # grouped by the types of the args[] the script reads, so args[0] compiles where they
    # differ, and a member only some of the types have is an error.
    # (On the host, a probe per function, each typed alone: vfs_caches_init has no args[0].)
    {"name": "fbt-glob-args", "group": "fbt",
     "on": {"host": {"expect": r"index 0 is out of range for fbt:vmlinux:vfs_\w+:entry args\[ \]", "rc": 1}},
     "cmd": "dtrace -e -n 'fbt:vmlinux:vfs_*:entry { trace(args[0]); }' && "
            "dtrace -e -n 'fbt:vmlinux:vfs_*:entry { trace(args[0]->f_path); }'",
     "expect": r"f_path is not a member of struct (?!file\b)\w+",
     "rc": 1},
    # A module's functions (binfmt_misc, loaded at boot): kprobes.
    {"name": "fbt-module", "group": "fbt",
     "on": {"host": {"expect": r"does not match any probes|refuses the fentry/fexit", "rc": 1}},
     "cmd": "mkdir -p /tmp/bm; dtrace -qn 'fbt:binfmt_misc::entry { @[probefunc] = count(); }"
            " END { printa(\"%s %@d\\n\", @); }' -c 'mount -t binfmt_misc none /tmp/bm'; s=$?;"
            " umount /tmp/bm 2>/dev/null; exit $s",
     "expect": r"bm_fill_super 1\n"},
    # A module function's args[] typed from the module's BTF (split on vmlinux's), listed
    # per function in a glob's -lv.
    {"name": "fbt-module-args", "group": "fbt",
     "on": {"host": {"expect": r"does not match any probes|refuses the fentry/fexit", "rc": 1}},
     "cmd": "dtrace -lvn 'fbt:binfmt_misc::entry' | grep -E 'bm_fill_super|args'; mkdir -p /tmp/bm;"
            " dtrace -qn 'fbt:binfmt_misc:bm_fill_super:entry"
            " { printf(\"%s %s\\n\", probefunc, stringof(args[0]->s_type->name)); }'"
            " -c 'mount -t binfmt_misc none /tmp/bm'; s=$?; umount /tmp/bm 2>/dev/null; exit $s",
     "expect": r"bm_fill_super entry\n\s+args\[0\]: struct super_block \*\n\s+args\[1\]: struct fs_context \*\n(.*\n)*bm_fill_super binfmt_misc\n"},
    # Hundreds of functions: one kprobe_multi link where the kernel has them.
    {"name": "fbt-many", "group": "fbt", "on": {"host": NO_FBT},
     "cmd": "dtrace -qn 'fbt::tcp_*:entry,fbt::tcp_*:return { @[probename] = count(); }"
            " tick-1s { exit(0); } END { printa(\"%s %@d\\n\", @); }'",
     "expect": r"entry \d+\n(.*\n)*return \d+|return \d+\n(.*\n)*entry \d+"},
    # The Prometheus endpoint on loopback, scraped with busybox's wget once the updates
    # stopped: histograms' exact sums (kept in the kernel past the buckets) and counts.
    {"name": "prometheus-sum", "group": "fleet",
     "cmd": "ifconfig lo 127.0.0.1 up; dtrace -q -x prometheus=127.0.0.1:0"
            " -n 'tick-10ms /n++ < 50/ { @q = quantize(5); @w = lquantize(7, 0, 10, 1, 3); } tick-8s { exit(0); }'"
            " 2> /tmp/prom.err & i=0; until grep -q serving /tmp/prom.err || [ $i -ge 300 ]; do sleep 0.1; i=$((i+1)); done;"
            " sleep 3; wget -qO- \"$(sed -n 's/.*serving aggregations at //p' /tmp/prom.err)\"; cat /tmp/prom.err; wait",
     "expect": r"dtrace_q_sum 250\ndtrace_q_count 50\n(.*\n)*dtrace_w_sum 1050\ndtrace_w_count 150\n"},
    # Thread-locals (codegen/tls.rs) live in task local storage: every program type a
    # script attaches reads and writes them (syscall tracepoints, uprobes and uretprobes,
    # uprobe_multi, a sleepable uprobe where the kernel has one (6.12 on: its clause runs
    # to the copyinstr), BTF raw tracepoints, perf events, BEGIN/END), with dynvarsize
    # small enough to be counted, which adds the sched_process_exit helper.
    {"name": "self-programs", "group": "tls",
     "on": {"6.1": {"expect": r"invalid address(.*\n)*begin 7\n(.*\n)*writes [3-9]\d* work 3\n"}},
     "cmd": "dtrace -x dynvarsize=200 -qn 'BEGIN { self->b = 7; }"
            " syscall::write:entry /pid == $target/ { self->w = timestamp; }"
            " syscall::write:return /pid == $target && self->w/ { @w = count(); self->w = 0; }"
            " pid$target:a.out:work:entry { self->i = arg0 + 1; }"
            " pid$target:a.out:work:return /self->i/ { @k = count(); self->i = 0; }"
            " pid$target:a.out:fn*:entry { self->f++; }"
            " demo$target:::file { self->s = 1; printf(\"file %s\\n\", copyinstr(arg0)); }"
            " sched:::off-cpu /pid == $target/ { self->o++; }"
            " profile-97 { self->p++; }"
            " END { printf(\"begin %d\\n\", self->b); printa(\"writes %@d work %@d\\n\", @w, @k); }'"
            " -c \"$T/tprog 3\"",
     "expect": r"file untouched.h\n(.*\n)*begin 7\n(.*\n)*writes [3-9]\d* work 3\n"},
    # An exiting thread's thread-locals give their places back: ten processes one after
    # another, each setting self->x and exiting, in a space of three.
    {"name": "self-exit", "group": "tls",
     "cmd": "echo \"for i in 1 2 3 4 5 6 7 8 9 10; do $T/tprog 0; done\" > /tmp/ten.sh;"
            " dtrace -x dynvarsize=40 -qn 'syscall::execve:return /execname == \"tprog\"/"
            " { self->x = 1; @ = count(); } END { printa(\"execs %@d\\n\", @); }' -c 'sh /tmp/ten.sh'",
     "expect": r"(?s)\A(?!.*drop).*execs 10\n"},
    # Last: nothing dtrace attached stays (ftrace's list of functions with callbacks:
    # kprobes and BPF trampolines both show there).
    {"name": "nothing-left", "group": "core",
     "cmd": "n=$(wc -l < /sys/kernel/tracing/enabled_functions 2>/dev/null || echo 0); echo \"left $n\"",
     "expect": r"left 0\n"},
]

MARK = re.compile(r"### (BEGIN|END) (\S+)(?: RC=(\d+) SECS=([\d.]+))?")


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def cache_dir():
    d = os.environ.get("DTRACE_KERNELS_CACHE") or os.path.expanduser("~/.cache/dtrace-kernels")
    os.makedirs(d, exist_ok=True)
    return d


def resolve(meta):
    """The kernel image package a meta-package depends on (apt-get update once if unknown)."""
    for attempt in range(2):
        out = subprocess.run(["apt-cache", "depends", meta], capture_output=True, text=True).stdout
        m = re.search(r"Depends: (linux-image-\S+)", out)
        if m:
            return m.group(1)
        if attempt == 0:
            sh("apt-get", "update", "-qq")
    sys.exit(f"run.py: apt knows no package {meta} (is bookworm or bookworm-security missing?)")


def kernel_root(meta):
    """The unpacked package of the kernel image `meta` depends on, downloaded once."""
    cache = cache_dir()
    pkg = resolve(meta)
    root = os.path.join(cache, pkg)
    if not os.path.isdir(root):
        debs = [f for f in os.listdir(cache) if f.startswith(pkg + "_") and f.endswith(".deb")]
        if not debs:
            sh("apt-get", "download", "-q", pkg, cwd=cache, stdout=subprocess.DEVNULL)
            debs = [f for f in os.listdir(cache) if f.startswith(pkg + "_") and f.endswith(".deb")]
        tmp = root + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        sh("dpkg-deb", "-x", os.path.join(cache, debs[0]), tmp)
        os.rename(tmp, root)
    return root


def vmlinuz(root):
    boot = os.path.join(root, "boot")
    return os.path.join(boot, next(f for f in os.listdir(boot) if f.startswith("vmlinuz-")))


def write_tests(tdir, tests, dtrace):
    """tprog, one script per test and list.sh (runs them all, marking each on stdout)."""
    os.makedirs(tdir, exist_ok=True)
    sh("gcc", "-static", "-O1", "-g", "-o", os.path.join(tdir, "tprog"), os.path.join(HERE, "tprog.c"))
    lines = ["T=$(dirname \"$0\")", "export T"]
    for t in tests:
        with open(os.path.join(tdir, t["name"] + ".sh"), "w") as f:
            f.write(t["cmd"] + "\n")
        lines.append(
            f"s=$(cut -d' ' -f1 /proc/uptime); : > /tmp/dt-out; timeout 120 sh $T/{t['name']}.sh >> /tmp/dt-out 2>&1; rc=$?;"
            f" e=$(cut -d' ' -f1 /proc/uptime); echo '### BEGIN {t['name']}'; cat /tmp/dt-out;"
            f" echo; echo \"### END {t['name']} RC=$rc SECS=$(echo \"$e $s\" | awk '{{print $1 - $2}}')\""
        )
    with open(os.path.join(tdir, "list.sh"), "w") as f:
        f.write("\n".join(lines) + "\n")
    shutil.copy(dtrace, os.path.join(tdir, "dtrace"))


# --conformance: this machine's / over 9p (read-only), and a root of its own for a chroot:
# the host's top-level directories bound from the 9p mount, fresh /proc, /sys, /dev and /tmp.
# (Not a chroot into the 9p mount itself: there the roots of the host's /proc, /sys, /dev
# and /tmp share one inode number, so 9p gives them one dentry, and every mount on one of
# them lands on all four.) Oracle's unit tests run there with the release dtrace.
CONFORMANCE = """mkdir -p /host /root2
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose host /host || echo "### 9p mount failed"
mount -t tmpfs root2 /root2
for d in $(ls /host); do
    case $d in proc|sys|dev|tmp|run) continue;; esac
    if [ -L /host/$d ]; then ln -s "$(readlink /host/$d)" /root2/$d
    elif [ -d /host/$d ]; then mkdir /root2/$d && mount --bind /host/$d /root2/$d
    fi
done
mkdir -p /root2/proc /root2/sys /root2/dev /root2/tmp /root2/run
mount -t proc proc /root2/proc || echo "### proc mount failed"
mount -t sysfs sys /root2/sys && mount -t tracefs tracefs /root2/sys/kernel/tracing && \
    mount -t debugfs debugfs /root2/sys/kernel/debug || echo "### sys mounts failed"
mount --bind /dev /root2/dev || echo "### dev bind failed"
mount -t tmpfs tmp /root2/tmp
echo "### CONFORMANCE BEGIN"
chroot /root2 /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/tmp \
    /usr/bin/python3 @RUNPY@ --dtrace @DTRACE@ --set @SET@ --jobs 2 -v
echo "### CONFORMANCE END RC=$?"
"""

INIT = """#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /usr/bin /usr/sbin /sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# What udev would make: /dev/stdin and friends (scripts read `-s /dev/stdin`).
ln -s /proc/self/fd /dev/fd; ln -s fd/0 /dev/stdin; ln -s fd/1 /dev/stdout; ln -s fd/2 /dev/stderr
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
hostname kernelmatrix
echo kernelmatrix > /etc/hostname
export PATH=/tests:/bin:/sbin
for m in /modules/*.ko; do [ -e $m ] && insmod $m; done
echo "### KERNEL $(uname -r)"
if [ -e /conformance.sh ]; then sh /conformance.sh; else sh /tests/list.sh; fi
echo "### DONE"
poweroff -f
"""


def initramfs(work, tdir, extra=None):
    """A cpio (newc) archive: busybox, the tests directory, dtrace's shared libraries, and
    `extra` files ({path in the archive: bytes})."""
    root = os.path.join(work, "root")
    for path, data in (extra or {}).items():
        os.makedirs(os.path.dirname(root + path), exist_ok=True)
        with open(root + path, "wb") as f:
            f.write(data)
    for d in ("bin", "etc", "tests"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    busybox = shutil.which("busybox")
    if not busybox or subprocess.run(["ldd", busybox], capture_output=True).returncode == 0:
        sys.exit("run.py: needs a static busybox (Debian package busybox-static)")
    shutil.copy(busybox, os.path.join(root, "bin", "busybox"))
    with open(os.path.join(root, "init"), "w") as f:
        f.write(INIT)
    os.chmod(os.path.join(root, "init"), 0o755)
    shutil.copytree(tdir, os.path.join(root, "tests"), dirs_exist_ok=True)
    ldd = subprocess.run(["ldd", os.path.join(tdir, "dtrace")], capture_output=True, text=True).stdout
    for lib in re.findall(r"(/\S+) \(0x", ldd):
        dest = root + lib
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(lib, dest)
    image = os.path.join(work, "initramfs.cpio")
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, text=True, check=True).stdout
    with open(image, "wb") as out:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files.encode(),
                       stdout=out, check=True)
    return image


def boot(kernel, image, log, timeout, qemu_args=()):
    """Boot under qemu TCG; returns the serial console's text."""
    # One CPU: with two, TCG has let a CPU run kernel text another was patching (a fentry or
    # static-key nop), and the guest died of an int3 (seen in __schedule).
    cmd = ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "2048", "-smp", "1",
           "-kernel", kernel, "-initrd", image, "-display", "none", "-monitor", "none",
           "-serial", "stdio", "-no-reboot", *qemu_args,
           "-append", "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init"]
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        out = p.stdout
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + b"\n### TIMEOUT\n"
    text = out.decode(errors="replace").replace("\r", "")
    with open(log, "w") as f:
        f.write(text)
    return text


def results(text):
    """{test name: (rc, seconds, output)} from the marked console text."""
    found, name, lines = {}, None, []
    for line in text.split("\n"):
        m = MARK.search(line)
        if not m:
            if name:
                lines.append(line)
            continue
        if m.group(1) == "BEGIN":
            name, lines = m.group(2), [line[:m.start()]] if line[:m.start()] else []
        elif name == m.group(2):
            found[name] = (int(m.group(3)), float(m.group(4)), "\n".join(lines) + line[:m.start()])
            name = None
    return found


def check(test, kernel, got):
    want = dict(test, **test.get("on", {}).get(kernel, {}))
    if got is None:
        return "no result (the kernel stopped before it ran)"
    rc, _, out = got
    if rc != want.get("rc", 0):
        return f"exit status {rc}, expected {want.get('rc', 0)}"
    if not re.search(want["expect"], out):
        return f"output does not match /{want['expect']}/"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default="6.1,6.12,host", help="comma-separated: " + ", ".join(KERNELS) + ", host")
    ap.add_argument("--tests", default="", help="comma-separated test names or groups (default: all)")
    ap.add_argument("--dtrace", help="the dtrace binary (default: cargo build --release, then target/release/dtrace)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per kernel")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every test's output")
    ap.add_argument("--conformance", metavar="SET",
                    help="instead of the tests: Oracle's unit tests of SET (run.py --set, e.g. fbtprovider)"
                         " in a generic kernel (--conformance-kernel), with this machine's / shared over 9p")
    ap.add_argument("--conformance-kernel", default="6.12", choices=sorted(GENERIC),
                    help="the generic kernel --conformance boots (default: %(default)s)")
    ap.add_argument("--conformance-dir", default=os.path.join(os.path.dirname(REPO), "shared", "conformance"),
                    help="where the conformance harness run.py is (default: %(default)s)")
    args = ap.parse_args()

    kernels = [k for k in args.kernels.split(",") if k]
    for k in kernels:
        if k != "host" and k not in KERNELS:
            sys.exit(f"run.py: unknown kernel {k}")
    want = set(t for t in args.tests.split(",") if t)
    tests = [t for t in TESTS if not want or t["name"] in want or t["group"] in want]
    if not tests:
        sys.exit(f"run.py: no test named {args.tests}")
    dtrace = args.dtrace
    if not dtrace:
        sh("cargo", "build", "--release", "-q", "-p", "dtrace", cwd=REPO)
        dtrace = os.path.join(REPO, "target", "release", "dtrace")

    if args.conformance:
        sys.exit(conformance(args, os.path.abspath(dtrace)))

    failed = 0
    summary = []
    with tempfile.TemporaryDirectory(prefix="dtrace-kernels-") as work:
        tdir = os.path.join(work, "tests")
        write_tests(tdir, tests, dtrace)
        logdir = os.path.join(REPO, "target", "kernels")
        os.makedirs(logdir, exist_ok=True)
        for k in kernels:
            start = time.monotonic()
            log = os.path.join(logdir, f"{k}.log")
            if k == "host":
                env = dict(os.environ, PATH=tdir + ":" + os.environ["PATH"])
                p = subprocess.run(["sh", os.path.join(tdir, "list.sh")], capture_output=True, env=env,
                                   timeout=args.timeout)
                text = "### KERNEL " + os.uname().release + "\n" + p.stdout.decode(errors="replace")
                with open(log, "w") as f:
                    f.write(text)
            else:
                root = kernel_root(KERNELS[k])
                image = initramfs(os.path.join(work, k), tdir, modules(root, TEST_MODULES))
                text = boot(vmlinuz(root), image, log, args.timeout)
            secs = time.monotonic() - start
            m = re.search(r"### KERNEL (\S+)", text)
            release = m.group(1) if m else "(did not boot)"
            got = results(text)
            passed = 0
            print(f"== {k}: {release}")
            for t in tests:
                why = check(t, k, got.get(t["name"]))
                secs_t = f"{got[t['name']][1]:6.1f}s" if t["name"] in got else "      -"
                print(f"  {'ok  ' if why is None else 'FAIL'} {t['name']:<18} {secs_t}" + (f"  {why}" if why else ""))
                if why or args.verbose:
                    out = got.get(t["name"], (0, 0, ""))[2].strip("\n")
                    for line in out.split("\n")[-15:]:
                        print("       | " + line)
                passed += why is None
            failed += len(tests) - passed
            summary.append(f"{k}: {passed}/{len(tests)} passed in {secs:.0f} s (console: {log})")
    print("\n".join(summary))
    sys.exit(1 if failed else 0)


def modules(root, names, first=0):
    """{archive path: module bytes} of modules `names` (paths under the kernel's module
    tree, or bare module names) of the unpacked kernel at `root`, each after the modules it
    depends on (its `depends=`; built-in ones left out), decompressed (busybox's insmod
    takes plain .ko files) and named to load in order."""
    import lzma
    release = os.listdir(os.path.join(root, "lib", "modules"))[0]
    base = os.path.join(root, "lib", "modules", release)
    kernel_dir = os.path.join(base, "kernel")
    paths = {}
    for d, _, files in os.walk(kernel_dir):
        for f in files:
            if f.endswith((".ko", ".ko.xz")):
                paths[f.split(".ko")[0].replace("-", "_")] = os.path.join(d, f)
    builtin = set()
    with open(os.path.join(base, "modules.builtin")) as f:
        builtin = {os.path.basename(l.strip()).split(".ko")[0].replace("-", "_") for l in f}

    def read(name):
        path = paths[name]
        if path.endswith(".xz"):
            with lzma.open(path) as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()

    order, data = [], {}

    def add(name):
        name = os.path.basename(name).replace("-", "_")
        if name in data or name in builtin:
            return
        data[name] = read(name)
        info = data[name]
        at = info.find(b"\0depends=")
        deps = info[at + 9:info.index(b"\0", at + 1)].decode() if at >= 0 else ""
        for dep in filter(None, deps.split(",")):
            add(dep)
        order.append(name)

    for n in names:
        add(n)
    return {f"/modules/{i}-{n}.ko": data[n] for i, n in enumerate(order, first)}


def conformance(args, dtrace):
    """Oracle's unit tests of set `args.conformance` in a generic kernel; prints the
    harness's output and returns its status."""
    root = kernel_root(GENERIC[args.conformance_kernel])
    release = os.listdir(os.path.join(root, "lib", "modules"))[0]
    extra = modules(root, NINEP_MODULES)
    script = (CONFORMANCE.replace("@RUNPY@", os.path.join(os.path.abspath(args.conformance_dir), "run.py"))
              .replace("@DTRACE@", dtrace).replace("@SET@", args.conformance))
    extra["/conformance.sh"] = script.encode()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dtrace-kernels-") as work:
        tdir = os.path.join(work, "tests")
        write_tests(tdir, [], dtrace)
        image = initramfs(work, tdir, extra)
        log = os.path.join(REPO, "target", "kernels", "conformance.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        text = boot(vmlinuz(root), image, log, args.timeout,
                    ["-virtfs", "local,path=/,mount_tag=host,security_model=none,readonly=on"])
    m = re.search(r"### CONFORMANCE BEGIN\n(.*)### CONFORMANCE END RC=(\d+)", text, re.S)
    if not m:
        print(text[-3000:])
        print(f"run.py: the conformance run did not finish (console: {log})")
        return 1
    print(m.group(1), end="")
    print(f"conformance of {args.conformance} in {release}: {time.monotonic() - start:.0f} s")
    return int(m.group(2))


if __name__ == "__main__":
    main()
