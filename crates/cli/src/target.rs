//! Traced processes: `-c cmd` starts a command that waits until every probe is attached,
//! and `-p pid` follows a running process; tracing ends when they exit.
//!
//! The command is held as DTrace holds it: after its exec, so no event of the child
//! before the exec (still `dtrace`, on its way to `execve`) reaches the script. The child asks to be traced (`PTRACE_TRACEME`) and execs;
//! the kernel stops it after the exec, it is run on to where `-x evaltime` says (its
//! `main()` by default: `evaltime.rs`), and the release detaches (`PTRACE_DETACH`). Where
//! `ptrace` is refused, the child says so on its error pipe and is held before the exec
//! instead, on a pipe: it execs when it reads the release byte, and if dtrace exits (or is
//! killed) first, the pipe reads end-of-file and the child exits without running the
//! command.
//!
//! The command is forked by hand rather than with `std::process::Command`: `Command::spawn`
//! waits until the child has exec'd, which a child held before exec never does. A command
//! still running when the session ends is killed, as DTrace kills the processes it created, and so it is when
//! dtrace dies (the parent-death signal).

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::evaltime::EvalTime;

/// A held `-c` command.
pub enum Held {
    /// Stopped after its exec, traced by us until `PTRACE_DETACH`.
    Traced,
    /// Waiting before its exec for a byte on this pipe (the write end).
    Pipe(OwnedFd),
}

/// A process whose lifetime bounds the tracing session.
pub enum Target {
    /// A command we started (`-c`).
    Child {
        pid: i32,
        /// Program name, for messages.
        program: String,
        /// The file it will exec (USDT and `pid` probes are read from it before it runs).
        path: PathBuf,
        /// How it is held; `None` once released.
        held: Option<Held>,
        /// Read end of the exec-error pipe (`CLOEXEC` in the child: end-of-file on success).
        exec_error: Option<OwnedFd>,
        /// Set once reaped; the wait status when it was ours to collect.
        reaped: bool,
        status: Option<i32>,
    },
    /// A process we follow (`-p`); the pidfd, when the kernel has them, turns readable when
    /// the process exits (zombie or not) and is immune to pid reuse. `status`: its wait
    /// status, when it could be read as it exited.
    Existing {
        pid: i32,
        pidfd: Option<OwnedFd>,
        status: Option<i32>,
    },
}

/// The processes descended from `pid` now (children, theirs, ...), from the `children`
/// files of `/proc/PID/task/*/`; for follow-fork.
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut out: Vec<i32> = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in text
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
            {
                if child != pid && !out.contains(&child) {
                    out.push(child);
                    queue.push(child);
                }
            }
        }
    }
    out
}

/// Create a pipe with both ends close-on-exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fds into the valid array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Whether `path` is a regular file we may execute.
fn executable(path: &Path) -> Result<(), std::io::Error> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::from_raw_os_error(libc::EACCES));
    }
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::ENOENT))?;
    // SAFETY: access reads the NUL-terminated path only.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Find `program` as execvp(3) would: as given if it has a slash, else on `$PATH`.
fn resolve(program: &str) -> Result<PathBuf, std::io::Error> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).map(|_| path);
    }
    let search = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut first_error = None;
    for dir in std::env::split_paths(&search) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                first_error.get_or_insert(e);
            }
            Err(_) => {}
        }
    }
    Err(first_error.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::ENOENT)))
}

fn cstring(s: &OsStr) -> Result<CString, String> {
    CString::new(s.as_bytes()).map_err(|_| "dtrace: failed to execute: NUL in command\n".into())
}

/// The child between fork and exec: only async-signal-safe calls from here on.
///
/// # Safety
/// Must only be called in the child of a fork; every pointer must be valid.
unsafe fn held_child(
    hold: libc::c_int,
    error: libc::c_int,
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
) -> ! {
    // Rust ignores SIGPIPE; the command should not inherit that.
    let mut act: libc::sigaction = std::mem::zeroed();
    act.sa_sigaction = libc::SIG_DFL;
    libc::sigemptyset(&mut act.sa_mask);
    libc::sigaction(libc::SIGPIPE, &act, std::ptr::null_mut());
    // Die with dtrace, however it dies (illumos grabs the process kill-on-last-close). Set
    // before waiting: a dtrace that died earlier closed the hold pipe, so the read sees it.
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
    let null = std::ptr::null_mut::<libc::c_void>();
    if libc::ptrace(libc::PTRACE_TRACEME, 0, null, null) == 0 {
        // Stopped by the kernel right after the exec, until the release.
        exec_or_report(error, path, argv);
    }
    let held = HELD_BEFORE_EXEC;
    libc::write(
        error,
        (&held as *const i32).cast(),
        std::mem::size_of::<i32>(),
    );
    let mut byte = 0u8;
    loop {
        let n = libc::read(hold, (&mut byte as *mut u8).cast(), 1);
        if n == 1 {
            break;
        }
        if n < 0 && *libc::__errno_location() == libc::EINTR {
            continue;
        }
        // End-of-file: dtrace exited (or was killed) before releasing us; run nothing.
        libc::_exit(127);
    }
    exec_or_report(error, path, argv)
}

/// Exec, or write errno to the `error` pipe and exit.
///
/// # Safety
/// As [`held_child`].
unsafe fn exec_or_report(
    error: libc::c_int,
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
) -> ! {
    libc::execv(path, argv);
    let errno = *libc::__errno_location();
    libc::write(
        error,
        (&errno as *const i32).cast(),
        std::mem::size_of::<i32>(),
    );
    libc::_exit(127);
}

/// What the child writes on its error pipe when `ptrace` is refused and it waits before
/// its exec instead (errno values are positive).
const HELD_BEFORE_EXEC: i32 = -1;

/// How a `-c` command is held.
enum Hold {
    /// Stopped after its exec, traced by us.
    AfterExec,
    /// Waiting before its exec for the release byte.
    BeforeExec,
    /// Its exec failed (errno), or it died.
    Failed(Option<i32>),
}

/// Wait until the child forked for a command is held: stopped after its exec, or waiting
/// before it (it says so on `error`, whose write end it holds).
fn hold(pid: i32, error: &OwnedFd) -> Hold {
    loop {
        let mut wstatus = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut wstatus, libc::WNOHANG) };
        if r == pid {
            if libc::WIFSTOPPED(wstatus) {
                return Hold::AfterExec;
            }
            let mut word = [0u8; 4];
            // SAFETY: read into the 4-byte buffer we own.
            let n = unsafe { libc::read(error.as_raw_fd(), word.as_mut_ptr().cast(), 4) };
            return Hold::Failed((n == 4).then(|| i32::from_ne_bytes(word)));
        }
        if r < 0 {
            return Hold::Failed(None);
        }
        let mut p = libc::pollfd {
            fd: error.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, 5) } > 0 {
            let mut word = [0u8; 4];
            // SAFETY: read into the 4-byte buffer we own.
            let n = unsafe { libc::read(error.as_raw_fd(), word.as_mut_ptr().cast(), 4) };
            if n == 4 && i32::from_ne_bytes(word) == HELD_BEFORE_EXEC {
                return Hold::BeforeExec;
            }
            if n == 4 {
                return Hold::Failed(Some(i32::from_ne_bytes(word)));
            }
        }
    }
}

impl Target {
    /// Start `command` (split on blanks, as dtrace does), held at its exec, or where
    /// `evaltime` says once it has run there.
    pub fn spawn(command: &str, evaltime: EvalTime) -> Result<Target, String> {
        let words: Vec<&str> = command.split_whitespace().collect();
        let Some(&program) = words.first() else {
            return Err("dtrace: failed to execute : No such file or directory\n".to_string());
        };
        let fail = |e: &std::io::Error| {
            format!(
                "dtrace: failed to execute {program}: {}\n",
                crate::errno_text(e)
            )
        };
        let path = resolve(program).map_err(|e| fail(&e))?;
        let c_path = cstring(path.as_os_str())?;
        let c_args = words
            .iter()
            .map(|w| cstring(OsStr::new(w)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut argv: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let (hold_read, hold_write) = pipe().map_err(|e| fail(&e))?;
        let (error_read, error_write) = pipe().map_err(|e| fail(&e))?;
        // SAFETY: the child only calls async-signal-safe functions (close, sigaction, prctl,
        // ptrace, read, execv, write, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(fail(&std::io::Error::last_os_error()));
        }
        if pid == 0 {
            // SAFETY: in the child; the fds and strings are valid (the parent's copies).
            unsafe {
                libc::close(hold_write.as_raw_fd());
                libc::close(error_read.as_raw_fd());
                held_child(
                    hold_read.as_raw_fd(),
                    error_write.as_raw_fd(),
                    c_path.as_ptr(),
                    argv.as_ptr(),
                )
            }
        }
        drop(hold_read);
        drop(error_write);
        let held = match hold(pid, &error_read) {
            Hold::AfterExec => Held::Traced,
            Hold::BeforeExec => Held::Pipe(hold_write),
            Hold::Failed(errno) => {
                let e = std::io::Error::from_raw_os_error(errno.unwrap_or(libc::ECHILD));
                return Err(fail(&e));
            }
        };
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        // A command that dies on its way to where tracing starts is reaped already.
        let died = match held {
            Held::Traced => crate::evaltime::advance(pid, &path, evaltime).err(),
            Held::Pipe(_) => None,
        };
        Ok(Target::Child {
            pid,
            program: program.to_string(),
            path,
            held: if died.is_some() { None } else { Some(held) },
            exec_error: Some(error_read),
            reaped: died.is_some(),
            status: died.map(|d| d.0),
        })
    }

    /// Follow the running process `pid` (`-p`).
    pub fn attach(pid: &str) -> Result<Target, String> {
        let pid: i32 = match pid.trim().parse() {
            Ok(p) if p > 0 => p,
            _ => return Err(format!("dtrace: invalid process ID: {pid}\n")),
        };
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd >= 0 {
            // SAFETY: the fd (close-on-exec, as pidfds are) was just returned to us and is
            // owned by nobody else.
            let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
            let target = Target::Existing {
                pid,
                pidfd: Some(pidfd),
                status: None,
            };
            if target.existing_exited(pid) {
                return Err(format!(
                    "dtrace: failed to grab pid {pid}: No such process\n"
                ));
            }
            return Ok(target);
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::ESRCH) || !process_alive(pid) {
            return Err(format!(
                "dtrace: failed to grab pid {pid}: No such process\n"
            ));
        }
        Ok(Target::Existing {
            pid,
            pidfd: None,
            status: None,
        })
    }

    /// For a command not yet released: the program file it will run.
    pub fn exec_path(&self) -> Option<PathBuf> {
        match self {
            Target::Child { path, held, .. } if held.is_some() => Some(path.clone()),
            _ => None,
        }
    }

    pub fn pid(&self) -> i32 {
        match self {
            Target::Child { pid, .. } | Target::Existing { pid, .. } => *pid,
        }
    }

    /// Let a held command run; say so if its exec failed.
    pub fn release(&mut self) {
        if let Target::Child {
            pid,
            held,
            exec_error,
            program,
            ..
        } = self
        {
            match held.take() {
                Some(Held::Traced) => {
                    let null = std::ptr::null_mut::<libc::c_void>();
                    // SAFETY: detach our stopped tracee; no memory is passed.
                    unsafe { libc::ptrace(libc::PTRACE_DETACH, *pid, null, null) };
                }
                Some(Held::Pipe(fd)) => {
                    let mut f = std::fs::File::from(fd);
                    let _ = std::io::Write::write_all(&mut f, b"g");
                }
                None => {}
            }
            if let Some(fd) = exec_error.take() {
                // End-of-file once the exec succeeded (the write end is close-on-exec).
                let mut f = std::fs::File::from(fd);
                let mut errno = [0u8; 4];
                if let Ok(4) = std::io::Read::read(&mut f, &mut errno) {
                    let e = std::io::Error::from_raw_os_error(i32::from_ne_bytes(errno));
                    eprintln!(
                        "dtrace: failed to execute {program}: {}",
                        crate::errno_text(&e)
                    );
                }
            }
        }
    }

    /// Whether the process has exited (reaping our child).
    pub fn exited(&mut self) -> bool {
        match self {
            Target::Child {
                pid,
                reaped,
                status,
                ..
            } => {
                if !*reaped {
                    let mut wstatus = 0;
                    // SAFETY: waitpid on our own child with a valid status pointer.
                    let r = unsafe { libc::waitpid(*pid, &mut wstatus, libc::WNOHANG) };
                    if r == *pid {
                        *status = Some(wstatus);
                    }
                    *reaped = r == *pid
                        || (r < 0
                            && std::io::Error::last_os_error().raw_os_error()
                                == Some(libc::ECHILD));
                }
                *reaped
            }
            Target::Existing { pid, .. } => {
                let pid = *pid;
                let exited = self.existing_exited(pid);
                if let Target::Existing { pidfd, status, .. } = self {
                    if exited && status.is_none() {
                        *status = exit_status(pid, pidfd.as_ref());
                    }
                }
                exited
            }
        }
    }

    /// The signal that killed the process, once it has exited (when its status is known).
    pub fn terminating_signal(&self) -> Option<i32> {
        let (Target::Child { status, .. } | Target::Existing { status, .. }) = self;
        status
            .filter(|&s| libc::WIFSIGNALED(s))
            .map(|s| libc::WTERMSIG(s))
    }

    fn existing_exited(&self, pid: i32) -> bool {
        if let Target::Existing {
            pidfd: Some(fd), ..
        } = self
        {
            let mut p = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one valid pollfd with no timeout.
            let n = unsafe { libc::poll(&mut p, 1, 0) };
            return n > 0 && p.revents != 0;
        }
        !process_alive(pid)
    }

    /// Stop a command we started when tracing fails before it ran, or that outlives the
    /// session; wait for it so it is neither leaked nor left a zombie.
    pub fn abandon(&mut self) {
        if let Target::Child {
            pid,
            held,
            exec_error,
            reaped,
            ..
        } = self
        {
            if !*reaped {
                // SAFETY: kill and waitpid on our own, not yet reaped, child.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                    let mut status = 0;
                    while libc::waitpid(*pid, &mut status, 0) < 0
                        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                    {
                    }
                }
                *reaped = true;
            }
            held.take();
            exec_error.take();
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// The wait status of `pid`, a process that is not our child and has exited: from
/// `/proc/PID/stat` while it is a zombie (`exit_code`, the 52nd field), or once its parent
/// reaped it, from its pidfd (`PIDFD_GET_INFO`, kernel 6.15 and later).
fn exit_status(pid: i32, pidfd: Option<&OwnedFd>) -> Option<i32> {
    let from_stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let fields = &stat[stat.rfind(')')? + 1..];
            let mut fields = fields.split_whitespace();
            let zombie = fields.next() == Some("Z");
            // The state is field 3; exit_code is field 52.
            let code = fields.nth(48)?.parse::<i32>().ok()?;
            zombie.then_some(code)
        });
    from_stat.or_else(|| pidfd.and_then(pidfd_exit_code))
}

/// The exit code (a wait status) the kernel keeps with a pidfd once its process was reaped.
fn pidfd_exit_code(fd: &OwnedFd) -> Option<i32> {
    /// `struct pidfd_info` as of its first version (64 bytes).
    #[repr(C)]
    struct PidfdInfo {
        mask: u64,
        cgroupid: u64,
        ids: [u32; 11],
        exit_code: i32,
    }
    const PIDFD_INFO_EXIT: u64 = 1 << 3;
    // _IOWR(PIDFS_IOCTL_MAGIC 0xFF, 11, struct pidfd_info)
    const PIDFD_GET_INFO: u64 = 0xC000_0000 | (64 << 16) | (0xFF << 8) | 11;
    let mut info = PidfdInfo {
        mask: PIDFD_INFO_EXIT,
        cgroupid: 0,
        ids: [0; 11],
        exit_code: 0,
    };
    // SAFETY: the ioctl writes at most the 64 bytes of `info`, which we own.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), PIDFD_GET_INFO as _, &mut info) };
    (r == 0 && info.mask & PIDFD_INFO_EXIT != 0).then_some(info.exit_code)
}

/// Whether `pid` is a live (not zombie) process, from /proc.
fn process_alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesised command name, which may itself hold parentheses.
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | Some("x") | None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that dies of SIGSEGV, its pidfd, and its wait status as its parent reaps it.
    fn crashed() -> (i32, OwnedFd, std::process::Child) {
        let child = std::process::Command::new("sh")
            .args(["-c", "read x; kill -SEGV $$"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        assert!(fd >= 0, "pidfd_open: {}", std::io::Error::last_os_error());
        // SAFETY: the fd was just returned to us and is owned by nobody else.
        (pid, unsafe { OwnedFd::from_raw_fd(fd as i32) }, child)
    }

    #[test]
    fn the_status_of_a_process_we_did_not_start_is_read_zombie_or_reaped() {
        let (pid, fd, mut child) = crashed();
        drop(child.stdin.take());
        // A zombie: from /proc/PID/stat (and the pidfd is readable).
        let zombie = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rsplit(')').next().unwrap().trim_start().starts_with('Z'))
        };
        while !zombie(pid) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let status = exit_status(pid, None).expect("from /proc");
        assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSEGV);
        // Reaped: from the pidfd alone (kernel 6.15 and later, as here).
        child.wait().unwrap();
        let status = exit_status(pid, Some(&fd)).expect("from the pidfd");
        assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSEGV);
    }
}
