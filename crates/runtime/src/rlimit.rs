//! The one-time, best-effort attempt to lift `RLIMIT_MEMLOCK` for kernels that still charge
//! BPF memory to it (6.18 charges the memory cgroup instead, so failure is harmless).

use std::sync::Once;

/// Tries once per process to raise `RLIMIT_MEMLOCK` to infinity; failure is ignored.
pub(crate) fn raise_memlock_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        raise_memlock();
    });
}

/// Tries to raise `RLIMIT_MEMLOCK` to infinity; true if it succeeded.
fn raise_memlock() -> bool {
    let limit = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct we pass and nothing else.
    unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &limit) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_whether_the_limit_was_raised() {
        let raised = raise_memlock();
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut now) },
            0
        );
        if raised {
            assert_eq!(now.rlim_cur, libc::RLIM_INFINITY);
        }
        raise_memlock_once();
        raise_memlock_once();
    }
}
