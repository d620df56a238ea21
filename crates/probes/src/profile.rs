//! The `profile` provider: `profile-N[unit]` fires on every CPU, `tick-N[unit]` on one,
//! through cpu-clock perf events. A bare number is a rate in Hz; units are `ns nsec us
//! usec ms msec s sec m min h hour d day hz`.

use dtrace_backend::program::{ProbeContext, ProbeSite};
use dtrace_runtime::{cpus, Link, PerfEvent, Program, Sampling};

use crate::desc::Description;
use crate::{Attach, Probe};

/// The probes DTrace's profile provider offers before any is asked for.
const STANDARD: &[&str] = &[
    "profile-97",
    "profile-199",
    "profile-499",
    "profile-997",
    "profile-1999",
    "profile-4001",
    "profile-4999",
    "tick-1",
    "tick-10",
    "tick-100",
    "tick-500",
    "tick-1000",
    "tick-5000",
];

/// Shortest period there is a probe for, as DTrace: 200 µs for profile and tick alike
/// (`profile-1us` matches no probe).
const MIN_PERIOD_NS: u64 = 200_000;

fn probe(id: u32, name: &str) -> Option<Probe> {
    let (kind, spec) = name.split_once('-')?;
    let every_cpu = match kind {
        "profile" => true,
        "tick" => false,
        _ => return None,
    };
    let period_ns = parse_period(spec).filter(|&p| p >= MIN_PERIOD_NS)?;
    Some(Probe {
        site: ProbeSite {
            id,
            provider: "profile".into(),
            module: String::new(),
            function: String::new(),
            name: name.into(),
            context: ProbeContext::PerfEvent,
        },
        attach: Attach::Timer {
            period_ns,
            every_cpu,
        },
    })
}

pub fn standard_probes(first_id: u32) -> Vec<Probe> {
    STANDARD
        .iter()
        .enumerate()
        .filter_map(|(i, name)| probe(first_id + i as u32, name))
        .collect()
}

/// The probe an exact description names (`profile-10ms`, `tick-5s`), if it is one.
pub fn on_demand(desc: &Description, id: u32) -> Option<Probe> {
    let exact = |f: &str| !f.contains(['*', '?', '[', '\\']);
    if !(desc.provider.is_empty() || desc.provider == "profile")
        || !desc.module.is_empty()
        || !desc.function.is_empty()
        || !exact(&desc.name)
    {
        return None;
    }
    probe(id, &desc.name)
}

/// Period in ns of `N[unit]`; a bare number or `hz` is a frequency. The unit's case does
/// not matter (`tick-1Sec`), as in DTrace.
fn parse_period(spec: &str) -> Option<u64> {
    let digits = spec.bytes().take_while(u8::is_ascii_digit).count();
    let value: u64 = spec[..digits].parse().ok()?;
    if value == 0 {
        return None;
    }
    let ns_per = |unit: u64| value.checked_mul(unit);
    match spec[digits..].to_ascii_lowercase().as_str() {
        "" | "hz" => Some(1_000_000_000 / value),
        "ns" | "nsec" => Some(value),
        "us" | "usec" => ns_per(1_000),
        "ms" | "msec" => ns_per(1_000_000),
        "s" | "sec" => ns_per(1_000_000_000),
        "m" | "min" => ns_per(60_000_000_000),
        "h" | "hour" => ns_per(3_600_000_000_000),
        "d" | "day" => ns_per(86_400_000_000_000),
        _ => None,
    }
}

/// Attach `prog` to a timer on every online CPU, or on the first for `tick`; on `only`
/// alone when it is given (the `cpu` option).
pub fn attach(
    prog: &Program,
    period_ns: u64,
    every_cpu: bool,
    only: Option<u32>,
) -> dtrace_runtime::Result<Vec<Link>> {
    attach_each_cpu(prog, every_cpu, only, |cpu| {
        PerfEvent::cpu_clock(cpu, Sampling::PeriodNs(period_ns))
    })
}

/// Attach `prog` to the perf event `open` makes for each chosen CPU: every online CPU, or
/// the first unless `every_cpu`; `only` alone when it is given (the `cpu` option).
pub(crate) fn attach_each_cpu(
    prog: &Program,
    every_cpu: bool,
    only: Option<u32>,
    open: impl Fn(u32) -> dtrace_runtime::Result<PerfEvent>,
) -> dtrace_runtime::Result<Vec<Link>> {
    let online = cpus::online()?;
    let chosen: Vec<u32> = match only {
        Some(cpu) => vec![cpu],
        None if every_cpu => online,
        None => online.into_iter().take(1).collect(),
    };
    chosen
        .into_iter()
        .map(|cpu| Link::perf_event(prog, open(cpu)?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods() {
        assert_eq!(parse_period("997"), Some(1_000_000_000 / 997));
        assert_eq!(parse_period("5s"), Some(5_000_000_000));
        assert_eq!(parse_period("10ms"), Some(10_000_000));
        assert_eq!(parse_period("100hz"), Some(10_000_000));
        assert_eq!(parse_period("100Hz"), Some(10_000_000));
        assert_eq!(parse_period("1SEC"), Some(1_000_000_000));
        assert_eq!(parse_period("1sec"), Some(1_000_000_000));
        assert_eq!(parse_period("2m"), Some(120_000_000_000));
        assert_eq!(parse_period("x"), None);
        assert_eq!(parse_period("5parsecs"), None);
        assert_eq!(parse_period("0"), None);
    }

    #[test]
    fn creates_named_timers() {
        let d = Description::parse("tick-5s").unwrap();
        let p = on_demand(&d, 99).unwrap();
        assert_eq!(p.site.name, "tick-5s");
        assert_eq!(
            p.attach,
            Attach::Timer {
                period_ns: 5_000_000_000,
                every_cpu: false
            }
        );
        assert!(on_demand(&Description::parse("tick-*").unwrap(), 1).is_none());
        assert!(on_demand(&Description::parse("profile-199us").unwrap(), 1).is_none());
        assert!(on_demand(&Description::parse("profile-5000hz").unwrap(), 1).is_some());
        assert!(on_demand(&Description::parse("syscall::read:entry").unwrap(), 1).is_none());
    }
}
