//! DTrace's debugging aids. `-x debug` (or `DTRACE_DEBUG` in the environment): its
//! debugging messages on standard error, one line each in its form, `dtrace DEBUG SECONDS:
//! MESSAGE` (the Unix time): options set, sources read, descriptions matched, programs
//! compiled, loaded and attached. `-x core`: abort at exit, so the system dumps core.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether messages are written (for the whole process: the compiler runs on a thread of
/// its own).
static ON: AtomicBool = AtomicBool::new(false);

/// `-x core`: end by aborting, so the system dumps core (as DTrace's debugging aid does).
static CORE: AtomicBool = AtomicBool::new(false);

/// Abort at exit (`-x core`).
pub fn dump_core_at_exit() {
    CORE.store(true, Ordering::Relaxed);
}

/// End the process with `status`, or by abort under `-x core`.
pub fn exit(status: i32) -> ! {
    if CORE.load(Ordering::Relaxed) {
        std::process::abort();
    }
    std::process::exit(status)
}

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
