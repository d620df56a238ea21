//! The consumer's diagnostic messages (printed by dtrace(1) on stderr, each
//! prefixed with `dtrace: ` and ending in a newline).

/// `dtrace: N drops on CPU C` (principal buffer drops; "drop" when N is 1).
pub fn cpu_drops(drops: u64, cpu: u32) -> String {
    format!("dtrace: {drops} drop{} on CPU {cpu}\n", plural(drops))
}

/// Probe firings that did nothing because `levels` firings were already nested on the CPU
/// (each holds one of its scratch areas); our own, DTrace has no such drop.
pub fn nested_drops(drops: u64, cpu: u32, levels: u32) -> String {
    format!(
        "dtrace: {drops} drop{} on CPU {cpu} (probe fired inside {levels} nested firings)\n",
        plural(drops)
    )
}

/// `dtrace: N aggregation drops on CPU C`.
pub fn aggregation_drops(drops: u64, cpu: u32) -> String {
    format!(
        "dtrace: {drops} aggregation drop{} on CPU {cpu}\n",
        plural(drops)
    )
}

/// Drop counters reported from the status of the whole session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusDrop {
    Dynamic,
    DynamicRinsing,
    DynamicDirty,
    Speculative,
    SpeculationBusy,
    SpeculationUnavailable,
    StackStringOverflow,
    ErrorInErrorProbe,
}

/// e.g. `dtrace: 3 dynamic variable drops`.
pub fn status_drops(kind: StatusDrop, drops: u64) -> String {
    let (what, detail) = match kind {
        StatusDrop::Dynamic => ("dynamic variable drop", ""),
        StatusDrop::DynamicRinsing => ("dynamic variable drop", " with non-empty rinsing list"),
        StatusDrop::DynamicDirty => ("dynamic variable drop", " with non-empty dirty list"),
        StatusDrop::Speculative => ("speculative drop", ""),
        StatusDrop::SpeculationBusy => ("failed speculation", " (available buffer(s) still busy)"),
        StatusDrop::SpeculationUnavailable => {
            ("failed speculation", " (no speculative buffer available)")
        }
        StatusDrop::StackStringOverflow => ("jstack()/ustack() string table overflow", ""),
        StatusDrop::ErrorInErrorProbe => ("error", " in ERROR probe enabling"),
    };
    format!("dtrace: {drops} {what}{}{detail}\n", plural(drops))
}

/// A probe fault, with DTrace's fault codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Invalid address; the faulting address is printed.
    BadAddr(u64),
    /// Invalid alignment; the faulting address is printed.
    BadAlign(u64),
    IllegalOp,
    DivZero,
    NoScratch,
    KernelPriv,
    UserPriv,
    TupleOverflow,
    /// Bad stack; the faulting address is printed.
    BadStack(u64),
    Library,
    Unknown,
}

impl Fault {
    /// Decode DTrace's fault code (`DTRACEFLT_*`) and faulting address.
    pub fn from_code(code: u64, addr: u64) -> Fault {
        match code {
            1 => Fault::BadAddr(addr),
            2 => Fault::BadAlign(addr),
            3 => Fault::IllegalOp,
            4 => Fault::DivZero,
            5 => Fault::NoScratch,
            6 => Fault::KernelPriv,
            7 => Fault::UserPriv,
            8 => Fault::TupleOverflow,
            9 => Fault::BadStack(addr),
            1000 => Fault::Library,
            _ => Fault::Unknown,
        }
    }

    /// The fault text, with the address where DTrace shows one.
    fn describe(self) -> String {
        let (name, addr) = match self {
            Fault::BadAddr(a) => ("invalid address", Some(a)),
            Fault::BadAlign(a) => ("invalid alignment", Some(a)),
            Fault::IllegalOp => ("illegal operation", None),
            Fault::DivZero => ("divide-by-zero", None),
            Fault::NoScratch => ("out of scratch space", None),
            Fault::KernelPriv => ("invalid kernel access", None),
            Fault::UserPriv => ("invalid user access", None),
            Fault::TupleOverflow => ("tuple stack overflow", None),
            Fault::BadStack(a) => ("bad stack", Some(a)),
            Fault::Library => ("library-level fault", None),
            Fault::Unknown => ("unknown fault", None),
        };
        match addr {
            Some(a) => format!("{name} (0x{a:x})"),
            None => name.to_string(),
        }
    }
}

/// The probe a faulting clause was enabled on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeDesc {
    pub id: u32,
    pub provider: String,
    pub module: String,
    pub function: String,
    pub name: String,
}

/// `dtrace: error on enabled probe ID E (ID P: prov:mod:func:name): FAULT in
/// action #A at DIF offset O`.  `action` 0 means the predicate; `offset`
/// `None` omits the offset.
pub fn probe_error(
    epid: u32,
    probe: &ProbeDesc,
    fault: Fault,
    action: u32,
    offset: Option<i32>,
) -> String {
    let place = if action == 0 {
        "predicate".to_string()
    } else {
        format!("action #{action}")
    };
    let offset = offset.map_or(String::new(), |o| format!(" at DIF offset {o}"));
    format!(
        "dtrace: error on enabled probe ID {epid} (ID {}: {}:{}:{}:{}): {} in {place}{offset}\n",
        probe.id,
        probe.provider,
        probe.module,
        probe.function,
        probe.name,
        fault.describe()
    )
}

/// `dtrace: description 'X' matched N probes` (`kind` is "description" for
/// -n/-P/-m/-f/-i, "script" for -s).
pub fn matched_probes(kind: &str, name: &str, count: u32) -> String {
    format!(
        "dtrace: {kind} '{name}' matched {count} probe{}\n",
        if count == 1 { "" } else { "s" }
    )
}

/// "s" when more than one.
fn plural(n: u64) -> &'static str {
    if n > 1 {
        "s"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops() {
        assert_eq!(cpu_drops(5, 0), "dtrace: 5 drops on CPU 0\n");
        assert_eq!(cpu_drops(1, 3), "dtrace: 1 drop on CPU 3\n");
        assert_eq!(
            aggregation_drops(2, 1),
            "dtrace: 2 aggregation drops on CPU 1\n"
        );
        assert_eq!(
            status_drops(StatusDrop::Dynamic, 3),
            "dtrace: 3 dynamic variable drops\n"
        );
        assert_eq!(
            status_drops(StatusDrop::DynamicDirty, 1),
            "dtrace: 1 dynamic variable drop with non-empty dirty list\n"
        );
        assert_eq!(
            status_drops(StatusDrop::SpeculationBusy, 2),
            "dtrace: 2 failed speculations (available buffer(s) still busy)\n"
        );
    }

    #[test]
    fn errors() {
        let probe = ProbeDesc {
            id: 1,
            provider: "dtrace".into(),
            module: "".into(),
            function: "".into(),
            name: "BEGIN".into(),
        };
        assert_eq!(
            probe_error(3, &probe, Fault::from_code(1, 0), 1, Some(16)),
            "dtrace: error on enabled probe ID 3 (ID 1: dtrace:::BEGIN): invalid address (0x0) in action #1 at DIF offset 16\n"
        );
        assert_eq!(
            probe_error(3, &probe, Fault::DivZero, 0, None),
            "dtrace: error on enabled probe ID 3 (ID 1: dtrace:::BEGIN): divide-by-zero in predicate\n"
        );
        assert_eq!(
            probe_error(4, &probe, Fault::BadAlign(0x1001), 2, Some(8)),
            "dtrace: error on enabled probe ID 4 (ID 1: dtrace:::BEGIN): invalid alignment (0x1001) in action #2 at DIF offset 8\n"
        );
    }

    #[test]
    fn matched() {
        assert_eq!(
            matched_probes("description", "BEGIN", 1),
            "dtrace: description 'BEGIN' matched 1 probe\n"
        );
        assert_eq!(
            matched_probes("script", "x.d", 3),
            "dtrace: script 'x.d' matched 3 probes\n"
        );
    }
}
