//! The one-time, best-effort attempt to lift `RLIMIT_MEMLOCK` for kernels that still charge
//! BPF memory to it (6.18 charges the memory cgroup instead, so failure is harmless), and
//! `RLIMIT_NOFILE`'s soft limit to its hard one: every program and link is a descriptor, and
//! an `fbt` glob over hundreds of functions by fentry needs two each (the usual soft limit is
//! 1,024).

use std::sync::Once;

/// Tries once per process to raise `RLIMIT_MEMLOCK` to infinity; failure is ignored.
pub(crate) fn raise_memlock_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        raise_memlock();
    });
}

/// Tries once per process to raise `RLIMIT_NOFILE`'s soft limit to the hard limit.
pub(crate) fn raise_nofile_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        raise_nofile();
    });
}

/// Raises `RLIMIT_NOFILE`'s soft limit to its hard limit; true if it succeeded.
fn raise_nofile() -> bool {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own; setrlimit reads it.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return false;
        }
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0
    }
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

    #[test]
    fn the_soft_limit_on_descriptors_is_the_hard_one() {
        assert!(raise_nofile());
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
        assert_eq!(now.rlim_cur, now.rlim_max);
    }
}
