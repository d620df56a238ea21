//! `-x debug` (or `DTRACE_DEBUG` in the environment): DTrace's debugging messages on
//! standard error, one line each in its form, `dtrace DEBUG SECONDS: MESSAGE` (the Unix
//! time): what was read, matched, compiled, loaded and attached, and how tracing ended.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether messages are written (for the whole process: the compiler runs on a thread of
/// its own).
static ON: AtomicBool = AtomicBool::new(false);

/// Turn the messages on.
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// Whether the messages are on.
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed) || std::env::var_os("DTRACE_DEBUG").is_some()
}

/// Write one message, when they are on; `message` is made only then.
pub fn say(message: impl FnOnce() -> String) {
    if enabled() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        eprintln!("dtrace DEBUG {now}: {}", message());
    }
}
