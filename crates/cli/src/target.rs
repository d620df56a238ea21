//! Traced processes: `-c cmd` starts a command that waits until every probe is attached
//! (it is held before exec on a pipe), and `-p pid` follows a running process; tracing ends
//! when they exit.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// A process whose lifetime bounds the tracing session.
pub enum Target {
    Child {
        child: Child,
        release: Option<OwnedFd>,
    },
    Existing(i32),
}

impl Target {
    /// Start `command` (split on blanks, as dtrace does), held before exec.
    pub fn spawn(command: &str) -> Result<Target, String> {
        let words: Vec<&str> = command.split_whitespace().collect();
        let Some((program, rest)) = words.split_first() else {
            return Err("dtrace: failed to execute : empty command\n".to_string());
        };
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two fds into the valid array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(format!(
                "dtrace: failed to execute {command}: {}\n",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: both fds were just created and are owned by nobody else.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (read_raw, write_raw) = (fds[0], fds[1]);
        let mut cmd = Command::new(program);
        cmd.args(rest);
        // SAFETY: the closure only calls close(2) and read(2), which are async-signal-safe, in the child
        // between fork and exec; it waits until dtrace releases it (or exits).
        unsafe {
            cmd.pre_exec(move || {
                // Drop the child's copy of the write end, so dtrace exiting releases it.
                libc::close(write_raw);
                let mut f = std::fs::File::from_raw_fd(read_raw);
                let mut byte = [0u8; 1];
                let _ = f.read(&mut byte);
                std::mem::forget(f);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| {
            format!(
                "dtrace: failed to execute {program}: {}\n",
                crate::errno_text(&e)
            )
        })?;
        drop(read_end);
        Ok(Target::Child {
            child,
            release: Some(write_end),
        })
    }

    pub fn attach(pid: &str) -> Result<Target, String> {
        let pid: i32 = pid
            .parse()
            .map_err(|_| format!("dtrace: invalid process ID: {pid}\n"))?;
        // SAFETY: kill with signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return Err(format!(
                "dtrace: failed to grab pid {pid}: No such process\n"
            ));
        }
        Ok(Target::Existing(pid))
    }

    pub fn pid(&self) -> i32 {
        match self {
            Target::Child { child, .. } => child.id() as i32,
            Target::Existing(pid) => *pid,
        }
    }

    /// Let a held command run.
    pub fn release(&mut self) {
        if let Target::Child { release, .. } = self {
            if let Some(fd) = release.take() {
                let mut f = std::fs::File::from(fd);
                let _ = std::io::Write::write_all(&mut f, b"g");
            }
        }
    }

    /// Whether the process has exited (reaping our child).
    pub fn exited(&mut self) -> bool {
        match self {
            Target::Child { child, .. } => !matches!(child.try_wait(), Ok(None)),
            // SAFETY: kill with signal 0 only checks that the process exists.
            Target::Existing(pid) => unsafe { libc::kill(*pid, 0) != 0 },
        }
    }

    /// Stop a command we started when tracing fails before it ran.
    pub fn abandon(&mut self) {
        if let Target::Child { child, .. } = self {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
