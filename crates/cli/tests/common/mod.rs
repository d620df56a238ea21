//! Shared by the integration tests: they load real programs into the running kernel, so they
//! need root, and say so plainly instead of skipping.

/// Fail the test with a clear message unless running as root.
pub fn require_root() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "these tests load BPF programs into the running kernel and must run as root"
    );
}
