//! SIGINT and SIGTERM end tracing cleanly (END runs, aggregations print), as in DTrace; a
//! second signal exits at once.
//!
//! As DTrace does, a signal that was ignored when dtrace started (`nohup`, a background job
//! of a non-interactive shell) stays ignored, and SIGPIPE gets its default action back (Rust
//! ignores it), so `dtrace ... | head` ends when the reader goes away instead of tracing on,
//! writing nowhere. Kernel objects are owned by file descriptors, so they go with the process
//! on every path.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    if STOP.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe; a second interrupt means "stop now".
        unsafe { libc::_exit(1) };
    }
}

/// Set `sig`'s action to `handler` (a function or `SIG_DFL`), without SA_RESTART so that
/// blocking waits return early; unless `keep_ignored` and it is ignored now.
fn set(sig: libc::c_int, handler: libc::sighandler_t, keep_ignored: bool) {
    // SAFETY: sigaction with zeroed structs and a handler that only touches an atomic and
    // calls _exit.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if keep_ignored
            && libc::sigaction(sig, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
        {
            return;
        }
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(sig, &act, std::ptr::null_mut());
    }
}

/// Give SIGPIPE its default action back, once output is what is left to write (pipes to
/// helpers such as `cpp` are written before).
pub fn default_sigpipe() {
    set(libc::SIGPIPE, libc::SIG_DFL, false);
}

/// Install the handlers for tracing: SIGINT, SIGTERM, and SIGPIPE's default action.
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    set(libc::SIGINT, handler, true);
    set(libc::SIGTERM, handler, true);
    default_sigpipe();
}

/// Whether SIGINT or SIGTERM asked tracing to stop.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}
