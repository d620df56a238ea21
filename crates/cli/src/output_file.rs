//! Where records go: stdout, or the `-o` file. The file is opened only once the programs are
//! loaded (so a FIFO given to `-o` blocks there, and a failed load leaves no file); what the
//! consumer writes before that (JSON "matched" lines) waits in memory and goes first.
//!
//! A write that fails (a full disk, `/dev/full`, an I/O error) is kept as the output's
//! [`OutputFile::failure`]: the session stops on it and `dtrace` exits with an error rather
//! than tracing on into nowhere. A closed pipe is not one: SIGPIPE ends `dtrace` first, as it
//! ends DTrace.
//!
//! `freopen()` sends the output to another file until `freopen("")` ([`OutputFile::reopen`]),
//! `ftruncate()` empties it, and `system()` commands write where it goes
//! ([`OutputFile::command_stdout`]).
//!
//! A postmortem keeps a copy of what is written from [`OutputFile::start_copy`] to
//! [`OutputFile::take_copy`], for the file it also goes to.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Stdout, Write};
use std::os::fd::AsFd;
use std::rc::Rc;

enum State {
    Stdout(BufWriter<Stdout>),
    /// `-o PATH` not opened yet, and what was written so far.
    Pending {
        path: String,
        early: Vec<u8>,
    },
    File(BufWriter<File>),
    /// `freopen(path)`: writing to `file` until `freopen("")` goes back to `original`.
    Redirected {
        file: BufWriter<File>,
        original: Box<State>,
    },
}

struct Shared {
    state: State,
    /// The first write error's text.
    failure: Option<String>,
    /// What was written since [`OutputFile::start_copy`].
    copy: Option<Vec<u8>>,
}

/// A handle on the output: one is given to the consumer's output, another opens it and
/// asks whether writing failed.
#[derive(Clone)]
pub struct OutputFile(Rc<RefCell<Shared>>);

impl OutputFile {
    /// Stdout, or the file at `path` (appended to), opened by [`OutputFile::open`].
    pub fn new(path: Option<&str>) -> OutputFile {
        let state = match path {
            Some(path) => State::Pending {
                path: path.to_string(),
                early: Vec::new(),
            },
            None => State::Stdout(BufWriter::new(io::stdout())),
        };
        OutputFile(Rc::new(RefCell::new(Shared {
            state,
            failure: None,
            copy: None,
        })))
    }

    /// Why writing failed, as `dtrace` reports it; `None` while every write succeeded.
    pub fn failure(&self) -> Option<String> {
        let why = self.0.borrow().failure.clone()?;
        Some(format!("dtrace: failed to write output: {why}\n"))
    }

    /// Keep a copy of everything written from now on.
    pub fn start_copy(&self) {
        self.0.borrow_mut().copy = Some(Vec::new());
    }

    /// What was written since [`OutputFile::start_copy`]; no more is kept.
    pub fn take_copy(&self) -> Vec<u8> {
        self.0.borrow_mut().copy.take().unwrap_or_default()
    }

    /// Run `op` on the state, keeping its first error.
    fn with_state<T>(&self, op: impl FnOnce(&mut State) -> io::Result<T>) -> io::Result<T> {
        let mut shared = self.0.borrow_mut();
        let result = op(&mut shared.state);
        if let Err(e) = &result {
            shared.failure.get_or_insert_with(|| crate::errno_text(e));
        }
        result
    }

    /// Open the `-o` file (nothing to do for stdout), with DTrace's message on failure.
    pub fn open(&self) -> Result<(), String> {
        let mut shared = self.0.borrow_mut();
        let State::Pending { path, early } = &shared.state else {
            return Ok(());
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| {
                format!(
                    "dtrace: failed to open output file '{path}': {}\n",
                    crate::errno_text(&e)
                )
            })?;
        let mut file = BufWriter::new(file);
        file.write_all(early).map_err(|e| {
            format!(
                "dtrace: failed to write output: {}\n",
                crate::errno_text(&e)
            )
        })?;
        shared.state = State::File(file);
        Ok(())
    }

    /// `freopen(path)`: what follows goes to the file at `path` (created, appended to);
    /// an empty `path` goes back to the original output. The path is bytes, as D strings
    /// are. The error is DTrace's words.
    pub fn reopen(&self, path: &[u8]) -> Result<(), String> {
        use std::os::unix::ffi::OsStrExt;
        let mut shared = self.0.borrow_mut();
        let _ = flush_state(&mut shared.state);
        // Opened first: a file that cannot be opened leaves the output as it was.
        let file = match path {
            b"" => None,
            _ => Some(BufWriter::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(std::ffi::OsStr::from_bytes(path))
                    .map_err(|e| {
                        format!(
                            "couldn't freopen() \"{}\": {}",
                            String::from_utf8_lossy(path),
                            crate::errno_text(&e)
                        )
                    })?,
            )),
        };
        let placeholder = State::Pending {
            path: String::new(),
            early: Vec::new(),
        };
        let original = match std::mem::replace(&mut shared.state, placeholder) {
            State::Redirected { original, .. } => original,
            other => Box::new(other),
        };
        shared.state = match file {
            Some(file) => State::Redirected { file, original },
            None => *original,
        };
        Ok(())
    }

    /// `ftruncate()`: empty the file output goes to (nothing for a terminal or a pipe).
    pub fn truncate(&self) {
        let mut shared = self.0.borrow_mut();
        let _ = flush_state(&mut shared.state);
        let file = match &shared.state {
            State::Stdout(_) => io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .ok()
                .map(File::from),
            State::File(w) | State::Redirected { file: w, .. } => w.get_ref().try_clone().ok(),
            State::Pending { .. } => None,
        };
        if let Some(mut f) = file {
            if f.metadata().is_ok_and(|m| m.is_file()) && f.set_len(0).is_ok() {
                let _ = f.seek(io::SeekFrom::Start(0));
            }
        }
    }

    /// Where a `system()` command writes: the `freopen()` file when the output went from
    /// stdout to one (as DTrace's stdout is reopened), else the inherited stdout.
    pub fn command_stdout(&self) -> Option<std::process::Stdio> {
        match &self.0.borrow().state {
            State::Redirected { file, original } if matches!(**original, State::Stdout(_)) => file
                .get_ref()
                .try_clone()
                .ok()
                .map(std::process::Stdio::from),
            _ => None,
        }
    }
}

/// Flush whatever `state` writes to.
fn flush_state(state: &mut State) -> io::Result<()> {
    match state {
        State::Stdout(w) => w.flush(),
        State::Pending { .. } => Ok(()),
        State::File(w) | State::Redirected { file: w, .. } => w.flush(),
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.with_state(|state| match state {
            State::Stdout(w) => w.write(buf),
            State::Pending { early, .. } => {
                early.extend_from_slice(buf);
                Ok(buf.len())
            }
            State::File(w) | State::Redirected { file: w, .. } => w.write(buf),
        })?;
        if let Some(copy) = &mut self.0.borrow_mut().copy {
            copy.extend_from_slice(&buf[..written]);
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.with_state(flush_state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_output_waits_for_the_file() {
        let path = std::env::temp_dir().join(format!("dtrace-output-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let out = OutputFile::new(path.to_str());
        let mut writer = out.clone();
        writer.write_all(b"early\n").unwrap();
        writer.flush().unwrap();
        assert!(!path.exists(), "opened before open()");
        out.open().unwrap();
        writer.write_all(b"late\n").unwrap();
        writer.flush().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "early\nlate\n");
        std::fs::remove_file(&path).unwrap();
        let bad = OutputFile::new(Some("/nonexistent/dir/file"));
        let err = bad.open().unwrap_err();
        assert!(
            err.starts_with("dtrace: failed to open output file '/nonexistent/dir/file': "),
            "{err}"
        );
    }

    #[test]
    fn a_copy_holds_what_was_written_between_start_and_take() {
        let out = OutputFile::new(Some("/dev/null"));
        out.open().unwrap();
        let mut writer = out.clone();
        writer.write_all(b"before\n").unwrap();
        out.start_copy();
        writer.write_all(b"during\n").unwrap();
        assert_eq!(out.take_copy(), b"during\n");
        writer.write_all(b"after\n").unwrap();
        assert!(out.take_copy().is_empty());
    }

    #[test]
    fn a_failed_write_is_kept() {
        let out = OutputFile::new(Some("/dev/full"));
        out.open().unwrap();
        let mut writer = out.clone();
        writer.write_all(b"lost\n").unwrap();
        assert_eq!(out.failure(), None, "buffered, not written yet");
        assert!(writer.flush().is_err());
        let _ = writer.write_all(b"more\n");
        assert_eq!(
            out.failure().as_deref(),
            Some("dtrace: failed to write output: No space left on device\n")
        );
    }
}
