//! Linux signal numbers and names: D's `SIG*` constants and the names dtrace prints for a
//! traced process killed by a signal.

/// Signals 1 to 31, in number order (`NAMES[0]` is SIGHUP, signal 1).
pub const NAMES: [&str; 31] = [
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGILL",
    "SIGTRAP",
    "SIGABRT",
    "SIGBUS",
    "SIGFPE",
    "SIGKILL",
    "SIGUSR1",
    "SIGSEGV",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    "SIGSTKFLT",
    "SIGCHLD",
    "SIGCONT",
    "SIGSTOP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
    "SIGIO",
    "SIGPWR",
    "SIGSYS",
];

/// The number of signal `name`, including the aliases and real-time bounds.
pub fn number(name: &str) -> Option<i64> {
    match name {
        "SIGIOT" => Some(6),
        "SIGCLD" => Some(17),
        "SIGPOLL" => Some(29),
        "SIGRTMIN" => Some(32),
        "SIGRTMAX" => Some(64),
        _ => NAMES.iter().position(|&s| s == name).map(|i| i as i64 + 1),
    }
}

/// The name of signal `sig` (1..=31).
pub fn name(sig: i32) -> Option<&'static str> {
    usize::try_from(sig)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| NAMES.get(i).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names() {
        assert_eq!(number("SIGKILL"), Some(9));
        assert_eq!(number("SIGSYS"), Some(31));
        assert_eq!(number("SIGCLD"), Some(17));
        assert_eq!(name(9), Some("SIGKILL"));
        assert_eq!(name(0), None);
        assert_eq!(name(32), None);
    }
}
