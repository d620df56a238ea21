//! Providers of other systems that Linux cannot have: a description naming one matches no
//! probe, and the error says why instead of leaving users to guess.

/// Providers whose probes sit in Solaris kernel code (or its counters) with no Linux
/// counterpart, and why.
const FOREIGN: &[(&str, &str)] = &[
    (
        "fpuinfo",
        "fpuinfo is a Solaris SPARC provider (floating-point emulation traps); Linux has no such probes",
    ),
    (
        "fsinfo",
        "fsinfo is a Solaris provider (its probes are in the Solaris vnode layer); Linux has no fsinfo probes: use syscall probes, or the sdt provider's tracepoints",
    ),
    (
        "mib",
        "mib is a Solaris provider (its probes count Solaris network MIB statistics); Linux has no mib probes",
    ),
    (
        "plockstat",
        "plockstat is a Solaris provider (its probes are in the Solaris C library's locks); Linux has no plockstat probes",
    ),
    (
        "sysinfo",
        "sysinfo is a Solaris provider (its probes count the Solaris kernel's cpu_sysinfo statistics, which Linux does not keep); Linux has no sysinfo probes",
    ),
    (
        "vminfo",
        "vminfo is a Solaris provider (its probes count the Solaris kernel's cpu_vminfo statistics, which Linux does not keep); Linux has no vminfo probes: the sdt provider has the kernel's memory tracepoints (sdt:exceptions::page_fault_user, ...)",
    ),
    (
        "xpv",
        "xpv is a Solaris provider (its probes are in the Solaris Xen hypervisor driver); Linux has no xpv probes",
    ),
];

/// Why a description naming `provider` (exactly, not by a glob) can match no probe on
/// Linux, if that provider is another system's.
pub fn why(provider: &str) -> Option<&'static str> {
    FOREIGN
        .iter()
        .find(|(name, _)| *name == provider)
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_solaris_providers_only_exactly() {
        assert!(why("sysinfo").is_some_and(|w| w.contains("cpu_sysinfo")));
        assert!(why("vminfo").is_some());
        assert_eq!(why("sys*"), None);
        assert_eq!(why("syscall"), None);
    }
}
