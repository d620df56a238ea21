//! tracefs: making sure it is mounted at /sys/kernel/tracing, and reading tracepoint ids.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// Where tracefs lives.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// `TRACEFS_MAGIC`, the `f_type` statfs reports for tracefs.
const TRACEFS_MAGIC: i64 = 0x7472_6163;

/// Mounts tracefs at [`TRACEFS`] unless it is already mounted there; returns the path.
pub fn ensure_mounted() -> Result<PathBuf> {
    // Serialise our own callers so two threads do not stack two mounts.
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|poison| poison.into_inner());
    let path = PathBuf::from(TRACEFS);
    if is_tracefs(&path)? {
        return Ok(path);
    }
    // SAFETY: all three strings are NUL-terminated literals; data is NULL.
    let ret = unsafe {
        libc::mount(
            c"tracefs".as_ptr(),
            c"/sys/kernel/tracing".as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if ret != 0 {
        return Err(Error::last_os(format!("mount tracefs on {TRACEFS}")));
    }
    Ok(path)
}

/// True if `path` is a tracefs mount.
fn is_tracefs(path: &Path) -> Result<bool> {
    Ok(fs_type(path)? == TRACEFS_MAGIC)
}

/// The type of the file system `path` is on (statfs's `f_type`).
pub(crate) fn fs_type(path: &Path) -> Result<i64> {
    let cpath = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::Invalid(format!("{path:?} contains NUL")))?;
    // SAFETY: statfs only writes into the zeroed struct we own.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: cpath is NUL-terminated and st is a valid statfs buffer.
    if unsafe { libc::statfs(cpath.as_ptr(), &mut st) } != 0 {
        return Err(Error::last_os(format!("statfs {path:?}")));
    }
    Ok(st.f_type as i64)
}

/// The id of tracepoint `category:name` (from `events/CATEGORY/NAME/id`), mounting tracefs if needed.
pub fn tracepoint_id(category: &str, name: &str) -> Result<u64> {
    let file = ensure_mounted()?
        .join("events")
        .join(category)
        .join(name)
        .join("id");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::io(format!("read {}", file.display()), &e))?;
    text.trim()
        .parse()
        .map_err(|_| Error::Invalid(format!("{}: not a number: {text:?}", file.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_and_finds_tracepoints() {
        let path = ensure_mounted().unwrap();
        assert!(is_tracefs(&path).unwrap());
        // A second call must not mount again.
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        ensure_mounted().unwrap();
        assert_eq!(
            std::fs::read_to_string("/proc/self/mounts").unwrap(),
            mounts
        );
        let id = tracepoint_id("sched", "sched_switch").unwrap();
        assert!(id > 0);
        let err = tracepoint_id("sched", "no_such_tracepoint").unwrap_err();
        assert_eq!(err.errno(), Some(libc::ENOENT));
    }

    #[test]
    fn other_filesystems_are_not_tracefs() {
        assert!(!is_tracefs(Path::new("/proc")).unwrap());
    }
}
