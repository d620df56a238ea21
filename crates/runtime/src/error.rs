//! The crate's error type: every kernel failure carries its errno and what we were doing.

use std::fmt;

/// A failed interaction with the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A system call (or a read of a kernel file) failed.
    Os {
        /// What was being attempted, e.g. `"BPF_MAP_CREATE (hash \"counts\")"`.
        what: String,
        /// The `errno` the kernel returned.
        errno: i32,
    },
    /// `BPF_PROG_LOAD` failed; `log` is the verifier's explanation (may be empty).
    Verifier {
        /// The program's name.
        prog: String,
        /// The `errno` the kernel returned.
        errno: i32,
        /// The verifier log text.
        log: String,
        /// The log outgrew its buffer: `log` is its last part.
        truncated: bool,
    },
    /// A request this crate refused before asking the kernel (bad sizes, unparsable files).
    Invalid(String),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An [`Error::Os`] from the calling thread's current `errno`.
    pub(crate) fn last_os(what: impl Into<String>) -> Error {
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        Error::Os {
            what: what.into(),
            errno,
        }
    }

    /// An [`Error::Os`] from a `std::io::Error` (file reads); errors without an errno become `EIO`.
    pub(crate) fn io(what: impl Into<String>, err: &std::io::Error) -> Error {
        Error::Os {
            what: what.into(),
            errno: err.raw_os_error().unwrap_or(libc::EIO),
        }
    }

    /// The kernel's errno, if the kernel reported this error.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Os { errno, .. } | Error::Verifier { errno, .. } => Some(*errno),
            Error::Invalid(_) => None,
        }
    }
}

/// An I/O error's text as the C library words it (`Permission denied`), without Rust's
/// "(os error N)" suffix.
pub fn errno_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The text of errno `errno`.
fn strerror(errno: i32) -> String {
    errno_text(&std::io::Error::from_raw_os_error(errno))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Os { what, errno } => write!(f, "{what}: {}", strerror(*errno)),
            Error::Verifier {
                prog, errno, log, ..
            } => {
                let reason = strerror(*errno);
                write!(f, "failed to load program {prog:?}: {reason}")?;
                if !log.trim().is_empty() {
                    write!(f, "\nverifier log:\n{}", log.trim_end())?;
                }
                Ok(())
            }
            Error::Invalid(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_errno_and_context() {
        let e = Error::Os {
            what: "BPF_MAP_CREATE".into(),
            errno: libc::EPERM,
        };
        let text = e.to_string();
        assert!(text.starts_with("BPF_MAP_CREATE: "), "{text}");
        assert!(text.contains("not permitted"), "{text}");
        assert_eq!(e.errno(), Some(libc::EPERM));
        assert_eq!(Error::Invalid("x".into()).errno(), None);
    }

    #[test]
    fn display_includes_the_verifier_log() {
        let e = Error::Verifier {
            prog: "p".into(),
            errno: libc::EACCES,
            log: "R2 !read_ok\n".into(),
            truncated: false,
        };
        assert!(e.to_string().ends_with("verifier log:\nR2 !read_ok"));
    }
}
