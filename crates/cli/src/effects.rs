//! What records ask of dtrace beyond the output (the consumer's `Effects`): `system()`
//! commands, `freopen()` and `ftruncate()` on the output, and `setopt()` of the options
//! DTrace lets change while tracing (the rates, shared with the session's loop).

use std::cell::Cell;
use std::rc::Rc;

use crate::options::Options;
use crate::output_file::OutputFile;

/// The options `setopt()` may change while tracing, read by the session's loop.
#[derive(Debug)]
pub struct Rates {
    pub switchrate_ns: Cell<Option<u64>>,
    pub statusrate_ns: Cell<Option<u64>>,
    pub aggrate_ns: Cell<Option<u64>>,
}

impl Rates {
    pub fn new(options: &Options) -> Rc<Rates> {
        Rc::new(Rates {
            switchrate_ns: Cell::new(options.switchrate_ns),
            statusrate_ns: Cell::new(options.statusrate_ns),
            aggrate_ns: Cell::new(options.aggrate_ns),
        })
    }
}

/// The consumer's effects for one session.
pub struct SessionEffects {
    pub output: OutputFile,
    pub rates: Rc<Rates>,
}

impl dtrace_consumer::Effects for SessionEffects {
    fn system(&mut self, command: &[u8]) -> Result<(), String> {
        use std::os::unix::ffi::OsStrExt;
        let mut child = std::process::Command::new("/bin/sh");
        child.arg("-c").arg(std::ffi::OsStr::from_bytes(command));
        if let Some(out) = self.output.command_stdout() {
            child.stdout(out);
        }
        child
            .status()
            .map(drop)
            .map_err(|e| format!("failed to run system( ) command: {}", crate::errno_text(&e)))
    }

    fn freopen(&mut self, path: &[u8]) -> Result<(), String> {
        self.output.reopen(path)
    }

    fn ftruncate(&mut self) {
        self.output.truncate();
    }

    fn setopt(&mut self, option: &str, value: Option<&str>) -> Result<(), String> {
        let mut parsed = Options::default();
        let result = parsed.set(option, value);
        match option {
            "switchrate" => result.map(|()| self.rates.switchrate_ns.set(parsed.switchrate_ns)),
            "statusrate" => result.map(|()| self.rates.statusrate_ns.set(parsed.statusrate_ns)),
            "aggrate" => result.map(|()| self.rates.aggrate_ns.set(parsed.aggrate_ns)),
            // As in DTrace: a compile-time option may be set, to no effect on the program
            // compiled; a value it does not take, or an option refused here, is an error.
            _ if crate::options::compile_time(option) => result,
            _ => match result {
                Err(why) if why == "Invalid option name" => Err(why),
                _ => Err("Operation illegal when tracing is active".into()),
            },
        }
    }
}
