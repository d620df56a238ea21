//! Macro variables: `$1`.. (the arguments after the script), `$$1`.. (the same as
//! strings) and named macros (`$target`, `$pid`, ...).

use std::collections::HashMap;

/// Arguments after the script and the values of named macros.
#[derive(Clone, Debug, Default)]
pub struct MacroArgs {
    /// `$0`, `$1`, ...: `$0` is the script name.
    pub args: Vec<String>,
    /// Values of `$target`, `$pid`, `$ppid`, `$uid`, `$gid`, ...
    pub named: HashMap<String, i64>,
    /// `-x defaultargs`: unset `$N` read as 0 / "".
    pub defaultargs: bool,
}
