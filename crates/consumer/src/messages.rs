//! The consumer's diagnostic messages (printed by dtrace(1) on stderr, each
//! prefixed with `dtrace: ` and ending in a newline).

use dtrace_abi::desc::Probe;
use dtrace_abi::record::{DropKind, Fault};

/// `dtrace: pid N terminated by SIGSEGV`: DTrace's notice of a traced process killed by a
/// signal, which a postmortem writes after the records that led up to it (on the output,
/// where those records are).
pub fn fatal_signal(pid: i32, signal: &str) -> String {
    format!("dtrace: pid {pid} terminated by {signal}\n")
}

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

/// DTrace's tag of a drop kind (the `droptags` option); `DTRACEDROP_NESTED` is ours.
pub fn drop_tag(kind: DropKind) -> &'static str {
    match kind {
        DropKind::Record => "DTRACEDROP_PRINCIPAL",
        DropKind::Aggregation => "DTRACEDROP_AGGREGATION",
        DropKind::Dynamic => "DTRACEDROP_DYNAMIC",
        DropKind::Nested => "DTRACEDROP_NESTED",
        DropKind::ErrorInError => "DTRACEDROP_DBLERROR",
        DropKind::Speculative => "DTRACEDROP_SPEC",
        DropKind::SpecBusy => "DTRACEDROP_SPECBUSY",
        DropKind::SpecUnavail => "DTRACEDROP_SPECUNAVAIL",
    }
}

/// The most bytes of a drop message DTrace keeps: it words one into a buffer of 80 bytes
/// with its NUL, so a longer message (a `droptags` tag before a long kind) is cut there.
const DROP_MESSAGE_MAX: usize = 79;

/// A drop message (`text`, one of this module's `dtrace: ...\n` drop lines) as DTrace
/// prints it: after `dtrace: `, the kind's tag when `droptags` is set, then the message,
/// the two cut at [`DROP_MESSAGE_MAX`] bytes.
pub fn drop_line(text: &str, tag: Option<&str>) -> String {
    let body = text.strip_prefix("dtrace: ").unwrap_or(text);
    let body = body.strip_suffix('\n').unwrap_or(body);
    let mut message = match tag {
        Some(tag) => format!("[{tag}] {body}"),
        None => body.to_string(),
    };
    if message.len() > DROP_MESSAGE_MAX {
        let mut end = DROP_MESSAGE_MAX;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
    }
    format!("dtrace: {message}\n")
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

/// The text of a fault of `kind` (`None`: a number DTrace does not know) at `addr`, with
/// the address where DTrace shows one.
pub fn fault_text(kind: Option<Fault>, addr: u64) -> String {
    let name = match kind {
        Some(Fault::BadAddr) => "invalid address",
        Some(Fault::BadAlign) => "invalid alignment",
        Some(Fault::IllegalOp) => "illegal operation",
        Some(Fault::DivZero) => "divide-by-zero",
        Some(Fault::NoScratch) => "out of scratch space",
        Some(Fault::KernelPriv) => "invalid kernel access",
        Some(Fault::UserPriv) => "invalid user access",
        Some(Fault::TupleOverflow) => "tuple stack overflow",
        Some(Fault::BadStack) => "bad stack",
        Some(Fault::BadSize) => "invalid size",
        Some(Fault::BadIndex) => "index out of bounds",
        Some(Fault::Library) => "library-level fault",
        None => "unknown fault",
    };
    match kind {
        Some(Fault::BadAddr) if addr as i64 == -1 => name.to_string(),
        Some(Fault::BadIndex) => format!("{name} ({})", addr as i64),
        Some(k) if k.has_address() => format!("{name} (0x{addr:x})"),
        _ => name.to_string(),
    }
}

/// `dtrace: error in dt_clause_S for probe ID P (prov:mod:func:name): FAULT at BPF pc O`
/// (Oracle DTrace's words): `statement` numbers the clause (one per probe description, in
/// program order), `fault` as [`fault_text`] words it, `offset` `None` omits the pc.
pub fn probe_error(statement: u32, probe: &Probe, fault: &str, offset: Option<i32>) -> String {
    let offset = offset.map_or(String::new(), |o| format!(" at BPF pc {o}"));
    format!(
        "dtrace: error in dt_clause_{statement} for probe ID {} ({}): {fault}{offset}\n",
        probe.id,
        probe.full_name(),
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
    fn tagged_drops_are_cut_where_dtrace_cuts_them() {
        let unavailable = status_drops(StatusDrop::SpeculationUnavailable, 3);
        assert_eq!(drop_line(&unavailable, None), unavailable);
        assert_eq!(
            drop_line(&unavailable, Some(drop_tag(DropKind::SpecUnavail))),
            "dtrace: [DTRACEDROP_SPECUNAVAIL] 3 failed speculations (no speculative buffer available\n"
        );
        assert_eq!(
            drop_line(&cpu_drops(2, 1), Some(drop_tag(DropKind::Record))),
            "dtrace: [DTRACEDROP_PRINCIPAL] 2 drops on CPU 1\n"
        );
    }

    #[test]
    fn errors() {
        let probe = Probe {
            id: 1,
            provider: "dtrace".into(),
            module: "".into(),
            function: "".into(),
            name: "BEGIN".into(),
        };
        let bad = fault_text(Fault::from_code(1), 0);
        assert_eq!(
            probe_error(3, &probe, &bad, Some(16)),
            "dtrace: error in dt_clause_3 for probe ID 1 (dtrace:::BEGIN): invalid address (0x0) at BPF pc 16\n"
        );
        assert_eq!(
            probe_error(0, &probe, &fault_text(Some(Fault::DivZero), 9), None),
            "dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): divide-by-zero\n"
        );
        assert_eq!(
            probe_error(4, &probe, &fault_text(Some(Fault::BadIndex), 8), Some(8)),
            "dtrace: error in dt_clause_4 for probe ID 1 (dtrace:::BEGIN): index out of bounds (8) at BPF pc 8\n"
        );
        assert_eq!(fault_text(Fault::from_code(77), 1), "unknown fault");
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
