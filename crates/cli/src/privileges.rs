//! What tracing needs from the system, checked before anything touches the kernel: loading
//! tracing programs takes CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN, which implies both) in
//! the effective set, as root has. Without them `dtrace` says so in one sentence instead of
//! failing at the first map it creates. Read access to tracefs (for `syscall` and `sdt`
//! probes) is checked where those probes are looked for (`dtrace_probes::Catalog`).

/// The message when capabilities are missing.
pub const NEEDED: &str = "dtrace: this needs root, or CAP_BPF and CAP_PERFMON (and read access to tracefs for syscall and sdt probes)\n";

const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

/// Whether this process may load and attach tracing programs; [`NEEDED`] if not. When the
/// effective set cannot be read (no `/proc`), the kernel is left to answer.
pub fn check() -> Result<(), &'static str> {
    let Some(effective) = effective_capabilities() else {
        return Ok(());
    };
    let has = |cap: u32| effective & (1 << cap) != 0;
    if has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON)) {
        Ok(())
    } else {
        Err(NEEDED)
    }
}

/// The effective capability set (`CapEff` of `/proc/self/status`).
fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_effective_set() {
        // The tests run as root, whose effective set holds every capability checked.
        let effective = effective_capabilities().expect("CapEff in /proc/self/status");
        for cap in [CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF] {
            assert_ne!(
                effective & (1 << cap),
                0,
                "capability {cap} missing: run the tests as root"
            );
        }
        assert_eq!(check(), Ok(()));
    }
}
