//! The kernel verifier's log of the programs `dtrace` loads (`-x bpflog`, `-x bpflogsize`):
//! what the loader asks the kernel for, and how the log is shown, as DTrace shows it: each
//! line after `BPF: ` on the standard error, or, when it did not fit in its buffer, three
//! lines saying so and naming the buffer's size.

use dtrace_runtime::ProgramSpec;

use crate::options::Options;

/// What is asked of the verifier for each program loaded, and shown of its answer.
#[derive(Clone, Copy, Debug, Default)]
pub struct BpfLog {
    /// `-v`: say more about each program (a rejection's log, how user memory is read).
    pub verbose: bool,
    /// `bpflog`: show the log of every program loaded, whether the kernel takes it or not.
    pub every: bool,
    /// `bpflogsize`: the log buffer's size; unset, it grows as the log needs, to 16 MiB.
    pub size: Option<u32>,
}

impl BpfLog {
    pub fn new(options: &Options, verbose: bool) -> BpfLog {
        BpfLog {
            verbose,
            every: options.bpflog,
            size: options.bpflogsize,
        }
    }

    /// Ask the kernel, in `spec`, for the log this wants.
    pub fn request(&self, spec: &mut ProgramSpec<'_>) {
        spec.always_log = self.verbose || self.every;
        spec.log_size = self.size;
        spec.log_every_step = self.every;
    }

    /// Show the log of one load under `bpflog` (`true`), or nothing (`false`).
    pub fn show(&self, log: &str, truncated: bool) -> bool {
        if !self.every {
            return false;
        }
        eprint!("{}", self.text(log, truncated));
        true
    }

    /// The log as shown.
    fn text(&self, log: &str, truncated: bool) -> String {
        if truncated {
            let size = self
                .size
                .map_or(dtrace_runtime::VERIFIER_LOG_MAX, |n| n as usize);
            return format!(
                "BPF verifier log is incomplete and is not reported.\n\
                 Set DTrace option 'bpflogsize' to some greater size for more output.\n\
                 (Current size is {size}.)\n"
            );
        }
        log.lines().map(|line| format!("BPF: {line}\n")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_prefixed_and_a_cut_log_is_not_shown() {
        let log = BpfLog {
            every: true,
            size: Some(4096),
            ..BpfLog::default()
        };
        assert_eq!(
            log.text("0: (b7) r0 = 0\nprocessed 2 insns\n", false),
            "BPF: 0: (b7) r0 = 0\nBPF: processed 2 insns\n"
        );
        assert!(log.text("r0 = 0", true).ends_with(
            "bpflogsize' to some greater size for more output.\n(Current size is 4096.)\n"
        ));
    }
}
