//! The `dtrace` provider: BEGIN, END and ERROR, which the consumer fires itself by
//! test-running their programs (there is no kernel event behind them).

use dtrace_backend::program::{ProbeContext, ProbeSite};

use crate::{Attach, Probe};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DtraceProbe {
    Begin,
    End,
    Error,
}

/// BEGIN (id 1), END (2) and ERROR (3), as DTrace numbers them.
pub fn probes() -> Vec<Probe> {
    [
        (DtraceProbe::Begin, "BEGIN"),
        (DtraceProbe::End, "END"),
        (DtraceProbe::Error, "ERROR"),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (which, name))| Probe {
        site: ProbeSite {
            id: i as u32 + 1,
            provider: "dtrace".into(),
            module: String::new(),
            function: String::new(),
            name: name.into(),
            context: ProbeContext::ArgArray,
        },
        attach: Attach::Dtrace(which),
    })
    .collect()
}
