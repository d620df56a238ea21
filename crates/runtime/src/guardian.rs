//! A guardian process for the processes `dtrace` stops: however `dtrace` ends (`SIGKILL`
//! included), none of them stays stopped.
//!
//! A watcher program stops a process (`bpf_send_signal(SIGSTOP)`) and records its tgid as
//! a key of a hash map; `dtrace` continues it and deletes the key. [`Guardian::spawn`]
//! forks a child that keeps only that map and the read end of a pipe whose write end only
//! `dtrace` holds (close-on-exec, so commands it runs do not). When `dtrace` has exited,
//! the read returns end-of-file and the child continues every process still recorded,
//! a few times over a short while (a dying process's descriptors, and so its programs'
//! links, are closed one after the other), then exits.
//!
//! The child runs raw system calls only (fork in a multi-threaded process allows nothing
//! else), leaves the session of `dtrace` (terminal signals are for `dtrace`) and keeps no
//! other descriptor open (nothing waiting for `dtrace`'s output waits for it).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::map::Map;
use crate::sys::cmd;
use crate::{Error, Result};

/// How many times the child looks for stopped processes, and how long it waits between.
const ROUNDS: u32 = 5;
const ROUND_NS: i64 = 20_000_000;
/// At most this many processes continued per round (the map's size bounds it anyway).
const PER_ROUND_MAX: u32 = 1 << 16;

/// The running guardian: dropping it (or `dtrace` exiting) lets it do its work.
pub struct Guardian {
    _pipe: OwnedFd,
}

impl Guardian {
    /// Fork the guardian of `held` (keys: tgids, 4 bytes).
    pub fn spawn(held: &Map) -> Result<Guardian> {
        let os = |what: &str| Error::Os {
            what: what.into(),
            errno: std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        };
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into the array we own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(os("pipe2 for the guardian"));
        }
        // SAFETY: pipe2 just returned these descriptors; nothing else owns them.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: fork(2); the child only makes raw system calls and never returns.
        match unsafe { libc::fork() } {
            -1 => Err(os("fork for the guardian")),
            0 => guard(read.as_raw_fd(), held),
            _ => Ok(Guardian { _pipe: write }),
        }
    }
}

/// The child: wait for `dtrace` to exit, then continue what is still held.
fn guard(pipe: RawFd, held: &Map) -> ! {
    let keep = [pipe.min(held.fd()), pipe.max(held.fd())];
    // SAFETY: raw system calls on descriptors and memory this child owns; no allocation.
    unsafe {
        libc::setsid();
        libc::prctl(
            libc::PR_SET_NAME,
            c"dtrace-guardian".as_ptr() as libc::c_ulong,
        );
        close_range(0, (keep[0] - 1).into());
        close_range(keep[0] + 1, (keep[1] - 1).into());
        close_range(keep[1] + 1, u32::MAX.into());
        let mut byte = 0u8;
        loop {
            let n = libc::read(pipe, (&mut byte as *mut u8).cast(), 1);
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        for _ in 0..ROUNDS {
            let mut key = 0u32;
            let mut left = PER_ROUND_MAX;
            // The first key each time: the previous one is deleted.
            while left > 0
                && held
                    .elem(cmd::MAP_GET_NEXT_KEY, 0, (&mut key as *mut u32) as u64, 0)
                    .is_ok()
            {
                libc::kill(key as libc::pid_t, libc::SIGCONT);
                let _ = held.elem(cmd::MAP_DELETE_ELEM, (&key as *const u32) as u64, 0, 0);
                left -= 1;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: ROUND_NS,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
        libc::_exit(0)
    }
}

/// `close_range(first, last, 0)`; nothing when the range is empty.
///
/// # Safety
/// Closes descriptors others may own: only for the guardian child.
unsafe fn close_range(first: RawFd, last: i64) {
    if first >= 0 && (first as i64) <= last {
        // SAFETY: forwarded from the caller.
        unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                last as libc::c_uint,
                0,
            );
        }
    }
}
