//! Why the DTrace options that cannot work in this implementation are refused: each reason
//! is the text after `dtrace: failed to set -x NAME: `, once the option's value was found
//! well formed (a malformed one is DTrace's `Invalid value for specified option`).

/// `late=dynamic` (`-xlate=dynamic`).
pub const LATE_DYNAMIC: &str = "dynamic translators are not made on Linux: they are DIF code \
that DTrace puts in DOF for its kernel driver to run, and here each translator is compiled \
into the programs that use it (late=static)";

/// `debugassert=mutexes`.
pub const DEBUGASSERT: &str = "mutex assertions are not available here: they check the locks \
of libdtrace's process-control threads, which this dtrace does not have";

/// `ctypes` and `dtypes`.
pub const CTF_FILES: &str = "CTF type files are not written here: this dtrace keeps the C and \
D types it knows (the kernel's BTF, the D library's and the program's declarations) in its own \
form, and has no CTF writer";

/// `dofstashpath`.
pub const DOF_STASH: &str = "there is no DOF stash here: no dtprobed daemon records the USDT \
probes of processes; they are read from the stapsdt notes of each process's binaries";

/// `pcapsize`.
pub const PCAPSIZE: &str = "pcap( ) is not available in this dtrace, so there are no captured \
packets for pcapsize to bound";

/// `pgmax`.
pub const PGMAX: &str = "no process is grabbed here for pgmax to bound: this dtrace reads a \
process's mappings and symbols from /proc and its files, without ptrace";

/// `useruid` and `sysslice`.
pub const SYSTEM_DAEMONS: &str = "there are no system daemons to spare here: libdtrace ptraces \
a process to create its pid and USDT probes unless it is a daemon (a uid below useruid, or in \
the systemd slice sysslice), and this dtrace creates them from /proc and the process's files, \
without ptrace";

/// `preallocate`.
pub const PREALLOCATE: &str = "memory is not preallocated here: memory freed goes back to the \
system, so none would stay reserved, and what tracing needs is made before it starts (bufsize, \
aggsize, dynvarsize, specsize)";
