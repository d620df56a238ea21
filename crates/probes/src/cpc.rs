//! The `cpc` provider (CPU performance counters): `cpc:::EVENT-MODE-COUNT` fires on every
//! CPU each COUNT occurrences of EVENT counted in MODE (`all`, `user` or `kernel`), through
//! a sampling perf event per CPU; `arg0` is the kernel PC (0 in user mode) and `arg1` the
//! user PC (0 in kernel mode), as for `profile`.
//!
//! Probes are made when a description names them. The events are the kernel's generic
//! perf events (software, and hardware where the machine has a PMU), named as Oracle's
//! DTrace names them after libpfm (`perf_count_sw_cpu_clock`, lower case, `_` for `-`) and
//! by their short names (`cpu_clock`, `instructions`, ...); illumos' generic PAPI names are
//! accepted where one generic event counts exactly what they count (see [`EVENTS`]). Only
//! the events `perf_event_open` accepts here are offered; `dtrace -l -P cpc` lists each
//! name with the suffix `-all-1000000000`, as Oracle's DTrace does.

use std::sync::OnceLock;

use dtrace_backend::program::{ProbeContext, ProbeSite};
use dtrace_runtime::{sys, Counter, Link, PerfEvent, Program};

use crate::desc::Description;
use crate::glob::glob_match;
use crate::{profile, Attach, Probe};

pub const PROVIDER: &str = "cpc";

/// What the listed probes append to an event's name.
const LISTED_SUFFIX: &str = "-all-1000000000";

/// The smallest count a probe may name, illumos' default `dcpc-min-overflow`: a smaller
/// period would interrupt the CPU too often.
pub const MIN_COUNT: u64 = 5000;

/// The largest count: the kernel refuses sample periods with the top bit set.
const MAX_COUNT: u64 = i64::MAX as u64;

/// `PERF_TYPE_HW_CACHE` and its `config` encoding: cache, operation, result.
const HW_CACHE: u32 = 3;
const fn read_misses(cache: u64) -> u64 {
    cache | (1 << 16)
}

/// A generic perf event and its names.
struct Event {
    /// The names DTrace knows it by: libpfm's (lower case) first, then its aliases.
    names: &'static [&'static str],
    /// illumos' PAPI names for it (matched without regard to case).
    papi: &'static [&'static str],
    type_: u32,
    config: u64,
}

const fn sw(names: &'static [&'static str], config: u64) -> Event {
    Event {
        names,
        papi: &[],
        type_: sys::PERF_TYPE_SOFTWARE,
        config,
    }
}

const fn hw(names: &'static [&'static str], papi: &'static [&'static str], config: u64) -> Event {
    Event {
        names,
        papi,
        type_: sys::PERF_TYPE_HARDWARE,
        config,
    }
}

/// The events, by `perf_event_attr` type and config (`linux/perf_event.h`). PAPI names map
/// only where the generic event counts what the PAPI preset counts: total cycles and
/// instructions, branch instructions and mispredictions, reference cycles, and the read
/// misses that stand for all misses of the level 1 instruction cache, the instruction TLB
/// and level 1 loads (`PAPI_l1_dcm` and `PAPI_tlb_dm` also count store misses, which the
/// generic cache events do not count on most CPUs, so they are not offered).
const EVENTS: &[Event] = &[
    sw(&["perf_count_sw_cpu_clock", "cpu_clock"], 0),
    sw(&["perf_count_sw_task_clock", "task_clock"], 1),
    sw(&["perf_count_sw_page_faults", "page_faults", "faults"], 2),
    sw(
        &["perf_count_sw_context_switches", "context_switches", "cs"],
        3,
    ),
    sw(
        &[
            "perf_count_sw_cpu_migrations",
            "cpu_migrations",
            "migrations",
        ],
        4,
    ),
    sw(&["perf_count_sw_page_faults_min", "minor_faults"], 5),
    sw(&["perf_count_sw_page_faults_maj", "major_faults"], 6),
    sw(&["perf_count_sw_alignment_faults", "alignment_faults"], 7),
    sw(&["perf_count_sw_emulation_faults", "emulation_faults"], 8),
    hw(
        &["perf_count_hw_cpu_cycles", "cycles", "cpu_cycles"],
        &["PAPI_tot_cyc"],
        0,
    ),
    hw(
        &["perf_count_hw_instructions", "instructions"],
        &["PAPI_tot_ins"],
        1,
    ),
    hw(
        &["perf_count_hw_cache_references", "cache_references"],
        &[],
        2,
    ),
    hw(&["perf_count_hw_cache_misses", "cache_misses"], &[], 3),
    hw(
        &[
            "perf_count_hw_branch_instructions",
            "branch_instructions",
            "branches",
        ],
        &["PAPI_br_ins"],
        4,
    ),
    hw(
        &["perf_count_hw_branch_misses", "branch_misses"],
        &["PAPI_br_msp"],
        5,
    ),
    hw(&["perf_count_hw_bus_cycles", "bus_cycles"], &[], 6),
    hw(
        &[
            "perf_count_hw_stalled_cycles_frontend",
            "stalled_cycles_frontend",
            "idle_cycles_frontend",
        ],
        &[],
        7,
    ),
    hw(
        &[
            "perf_count_hw_stalled_cycles_backend",
            "stalled_cycles_backend",
            "idle_cycles_backend",
        ],
        &[],
        8,
    ),
    hw(
        &["perf_count_hw_ref_cpu_cycles", "ref_cycles"],
        &["PAPI_ref_cyc"],
        9,
    ),
    Event {
        names: &[],
        papi: &["PAPI_l1_ldm"],
        type_: HW_CACHE,
        config: read_misses(0),
    },
    Event {
        names: &[],
        papi: &["PAPI_l1_icm"],
        type_: HW_CACHE,
        config: read_misses(1),
    },
    Event {
        names: &[],
        papi: &["PAPI_tlb_im"],
        type_: HW_CACHE,
        config: read_misses(4),
    },
];

fn lookup(name: &str) -> Option<&'static Event> {
    EVENTS
        .iter()
        .find(|e| e.names.contains(&name) || e.papi.iter().any(|p| p.eq_ignore_ascii_case(name)))
}

/// Why each event cannot be counted here (`None`: it can), found once by opening it.
fn refusals() -> &'static [Option<String>] {
    static REFUSALS: OnceLock<Vec<Option<String>>> = OnceLock::new();
    REFUSALS.get_or_init(|| {
        let cpu = dtrace_runtime::cpus::online()
            .ok()
            .and_then(|c| c.first().copied())
            .unwrap_or(0);
        EVENTS
            .iter()
            .map(|e| {
                let counter = counter(e, true, true, 1_000_000_000);
                PerfEvent::counter(cpu, counter)
                    .err()
                    .map(|err| match err.errno() {
                        Some(libc::ENOENT | libc::EOPNOTSUPP)
                            if e.type_ != sys::PERF_TYPE_SOFTWARE =>
                        {
                            "this machine has no hardware performance counter for it (a virtual \
                         machine often has none)"
                                .to_string()
                        }
                        _ => format!("the kernel refuses it ({err})"),
                    })
            })
            .collect()
    })
}

fn refusal(event: &Event) -> Option<&'static str> {
    let i = EVENTS.iter().position(|e| std::ptr::eq(e, event))?;
    refusals()[i].as_deref()
}

fn counter(event: &Event, user: bool, kernel: bool, period: u64) -> Counter {
    Counter {
        type_: event.type_,
        config: event.config,
        period,
        exclude_user: !user,
        exclude_kernel: !kernel,
    }
}

/// Why a probe name names no `cpc` probe.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    /// It is not of the form EVENT-MODE-COUNT.
    Malformed,
    /// Its event is no event of ours.
    UnknownEvent,
    /// A known event with a count below [`MIN_COUNT`].
    CountTooSmall(u64),
    /// A count above [`MAX_COUNT`].
    CountTooLarge,
    /// A known event this machine cannot count.
    Unavailable(&'static str),
}

/// The counter a probe name `EVENT-MODE-COUNT` asks for.
fn parse(name: &str) -> Result<Counter, Refused> {
    let mut parts = name.split('-');
    let (Some(event), Some(mode), Some(count), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refused::Malformed);
    };
    let (user, kernel) = match mode {
        "all" => (true, true),
        "user" => (true, false),
        "kernel" => (false, true),
        _ => return Err(Refused::Malformed),
    };
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refused::Malformed);
    }
    let event = lookup(event).ok_or(Refused::UnknownEvent)?;
    let count: u64 = match count.parse() {
        Ok(n) if n <= MAX_COUNT => n,
        _ => return Err(Refused::CountTooLarge),
    };
    if count < MIN_COUNT {
        return Err(Refused::CountTooSmall(count));
    }
    if let Some(why) = refusal(event) {
        return Err(Refused::Unavailable(why));
    }
    Ok(counter(event, user, kernel, count))
}

fn probe(id: u32, name: &str, counter: Counter) -> Probe {
    Probe {
        site: ProbeSite {
            id,
            provider: PROVIDER.into(),
            module: String::new(),
            function: String::new(),
            name: name.into(),
            context: ProbeContext::PerfEvent,
        },
        attach: Attach::Counter(counter),
    }
}

/// The probe an exact description names (`cpc:::cpu_clock-user-100000`, or the name
/// alone), if it is one; `Err`: why a description naming the `cpc` provider (or, by its
/// name alone, a known event) names none.
pub fn on_demand(desc: &Description, id: u32) -> Option<Result<Probe, String>> {
    let exact = |f: &str| !f.contains(['*', '?', '[', '\\']);
    if !(desc.provider.is_empty() || desc.provider == PROVIDER)
        || !desc.module.is_empty()
        || !desc.function.is_empty()
        || !exact(&desc.name)
    {
        return None;
    }
    let name = &desc.name;
    let event = name.split('-').next().unwrap_or_default();
    let why = match parse(name) {
        Ok(counter) => return Some(Ok(probe(id, name, counter))),
        Err(_) if desc.provider.is_empty() && lookup(event).is_none() => return None,
        Err(Refused::Malformed) => {
            "cpc probe names are EVENT-MODE-COUNT, MODE all, user or kernel and COUNT a \
             number"
                .to_string()
        }
        Err(Refused::UnknownEvent) => {
            format!("cpc has no event {event} (dtrace -l -P cpc lists the events this machine has)")
        }
        Err(Refused::CountTooSmall(count)) => {
            format!("the count {count} is below the cpc provider's minimum of {MIN_COUNT}")
        }
        Err(Refused::CountTooLarge) => {
            format!("the count is above the cpc provider's maximum of {MAX_COUNT}")
        }
        Err(Refused::Unavailable(why)) => format!(
            "event {event} cannot be counted: {why}; dtrace -l -P cpc lists the events this \
             machine has"
        ),
    };
    Some(Err(why))
}

/// Whether `desc` may name listed `cpc` probes that [`on_demand`] does not make: it names
/// the provider by a glob, or names it and no single probe exactly.
pub fn lists(desc: &Description) -> bool {
    let glob = |f: &str| f.contains(['*', '?', '[', '\\']);
    !desc.provider.is_empty()
        && glob_match(&desc.provider, PROVIDER)
        && (glob(&desc.provider) || desc.name.is_empty() || glob(&desc.name))
}

/// Whether `desc` names, exactly, a probe of the kind `dtrace -l` lists
/// (`cpc:::cpu_clock-all-1000000000`).
pub fn names_listed(desc: &Description) -> bool {
    (desc.provider.is_empty() || desc.provider == PROVIDER)
        && desc.module.is_empty()
        && desc.function.is_empty()
        && desc.name.ends_with(LISTED_SUFFIX)
}

/// The probes `dtrace -l` lists: each name of each event this machine can count, counted
/// in both modes every 1,000,000,000 events, with ids from `first_id`, leaving out the
/// names `known` says are there already.
pub fn listed_probes(first_id: u32, known: impl Fn(&str) -> bool) -> Vec<Probe> {
    let mut id = first_id;
    let mut probes = Vec::new();
    for (event, refused) in EVENTS.iter().zip(refusals()) {
        if refused.is_some() {
            continue;
        }
        for name in event.names {
            let name = format!("{name}{LISTED_SUFFIX}");
            if known(&name) {
                continue;
            }
            probes.push(probe(id, &name, counter(event, true, true, 1_000_000_000)));
            id += 1;
        }
    }
    probes
}

/// Attach `prog` to `counter` on every online CPU, or on `only` when it is given (the
/// `cpu` option).
pub fn attach(
    prog: &Program,
    counter: Counter,
    only: Option<u32>,
) -> dtrace_runtime::Result<Vec<Link>> {
    profile::attach_each_cpu(prog, true, only, |cpu| PerfEvent::counter(cpu, counter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names() {
        let c = parse("cpu_clock-user-100000").unwrap();
        assert_eq!(
            (c.type_, c.config, c.period),
            (sys::PERF_TYPE_SOFTWARE, 0, 100000)
        );
        assert!(!c.exclude_user && c.exclude_kernel);
        let c = parse("perf_count_sw_task_clock-kernel-5000").unwrap();
        assert_eq!(c.config, 1);
        assert!(c.exclude_user && !c.exclude_kernel);
        assert_eq!(parse("cpu_clock-all-100"), Err(Refused::CountTooSmall(100)));
        assert_eq!(
            parse("cpu_clock-all-9223372036854775807").unwrap().period,
            MAX_COUNT
        );
        for huge in ["9223372036854775808", "99999999999999999999"] {
            let name = format!("cpu_clock-all-{huge}");
            assert_eq!(parse(&name), Err(Refused::CountTooLarge));
        }
        for bad in [
            "cpu_clock-all-10000bonehead",
            "cpu_clock-both-10000",
            "cpu_clock-all-",
            "cpu_clock-all",
            "cpu_clock-all-x-10000",
            "profile-97",
        ] {
            assert_eq!(parse(bad), Err(Refused::Malformed), "{bad}");
        }
        assert_eq!(
            parse("nonexistentevent-all-10000"),
            Err(Refused::UnknownEvent)
        );
    }

    #[test]
    fn papi_names_ignore_case() {
        assert!(std::ptr::eq(
            lookup("PAPI_tot_ins").unwrap(),
            lookup("instructions").unwrap()
        ));
        assert!(std::ptr::eq(
            lookup("papi_TOT_CYC").unwrap(),
            lookup("cycles").unwrap()
        ));
        assert!(lookup("PAPI_l1_dcm").is_none());
        assert!(lookup("CPU_CLOCK").is_none());
    }

    #[test]
    fn names_are_unique() {
        let mut all: Vec<String> = EVENTS
            .iter()
            .flat_map(|e| e.names.iter().chain(e.papi).map(|n| n.to_ascii_lowercase()))
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
