//! Constants of DTrace's D library (the `inline int` definitions of `errno.d`, `signal.d`
//! and `unistd.d` that DTrace loads before every program), with Linux values.

/// The value of library constant `name`, or None.
pub(super) fn constant(name: &str) -> Option<i64> {
    let v = match name {
        // unistd.d: fault codes (the ERROR probe's arg4).
        "DTRACEFLT_UNKNOWN" => 0,
        "DTRACEFLT_BADADDR" => 1,
        "DTRACEFLT_BADALIGN" => 2,
        "DTRACEFLT_ILLOP" => 3,
        "DTRACEFLT_DIVZERO" => 4,
        "DTRACEFLT_NOSCRATCH" => 5,
        "DTRACEFLT_KPRIV" => 6,
        "DTRACEFLT_UPRIV" => 7,
        "DTRACEFLT_TUPOFLOW" => 8,
        "DTRACEFLT_BADSTACK" => 9,
        _ => return crate::signals::number(name).or_else(|| errno(name)),
    };
    Some(v)
}

fn errno(name: &str) -> Option<i64> {
    const ERRNOS: &[&str] = &[
        "EPERM",
        "ENOENT",
        "ESRCH",
        "EINTR",
        "EIO",
        "ENXIO",
        "E2BIG",
        "ENOEXEC",
        "EBADF",
        "ECHILD",
        "EAGAIN",
        "ENOMEM",
        "EACCES",
        "EFAULT",
        "ENOTBLK",
        "EBUSY",
        "EEXIST",
        "EXDEV",
        "ENODEV",
        "ENOTDIR",
        "EISDIR",
        "EINVAL",
        "ENFILE",
        "EMFILE",
        "ENOTTY",
        "ETXTBSY",
        "EFBIG",
        "ENOSPC",
        "ESPIPE",
        "EROFS",
        "EMLINK",
        "EPIPE",
        "EDOM",
        "ERANGE",
        "EDEADLK",
        "ENAMETOOLONG",
        "ENOLCK",
        "ENOSYS",
        "ENOTEMPTY",
        "ELOOP",
    ];
    match name {
        "EWOULDBLOCK" => Some(11),
        "EDEADLOCK" => Some(35),
        _ => ERRNOS.iter().position(|&s| s == name).map(|i| i as i64 + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::constant;

    #[test]
    fn values() {
        assert_eq!(constant("DTRACEFLT_DIVZERO"), Some(4));
        assert_eq!(constant("SIGKILL"), Some(9));
        assert_eq!(constant("SIGTERM"), Some(15));
        assert_eq!(constant("SIGSYS"), Some(31));
        assert_eq!(constant("EAGAIN"), Some(11));
        assert_eq!(constant("ELOOP"), Some(40));
        assert_eq!(constant("ENOSYS"), Some(38));
        assert_eq!(constant("nope"), None);
    }
}
