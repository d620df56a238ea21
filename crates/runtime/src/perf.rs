//! Perf events that BPF programs hang off: cpu-clock timers (the `profile` provider),
//! sampled counters (the `cpc` provider) and tracepoints. Events are opened disabled;
//! [`crate::Link`] enables them after attaching.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use crate::error::Result;
use crate::sys::{self, PerfEventAttr};

/// How often a timer event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Every this many nanoseconds of CPU clock.
    PeriodNs(u64),
    /// This many times per second.
    FrequencyHz(u64),
}

/// A counter sampled every `period` of its events (`perf_event_attr` `type`, `config`,
/// `sample_period`), counting in user mode, kernel mode or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    pub type_: u32,
    pub config: u64,
    pub period: u64,
    pub exclude_user: bool,
    pub exclude_kernel: bool,
}

/// An open perf event, owned through its file descriptor (closing it detaches everything).
#[derive(Debug)]
pub struct PerfEvent {
    fd: OwnedFd,
}

impl PerfEvent {
    /// A software cpu-clock timer on `cpu` covering every process (pid -1).
    pub fn cpu_clock(cpu: u32, sampling: Sampling) -> Result<PerfEvent> {
        let (period, freq_flag) = match sampling {
            Sampling::PeriodNs(ns) => (ns, 0),
            Sampling::FrequencyHz(hz) => (hz, sys::PERF_ATTR_FLAG_FREQ),
        };
        let attr = PerfEventAttr {
            type_: sys::PERF_TYPE_SOFTWARE,
            config: sys::PERF_COUNT_SW_CPU_CLOCK,
            sample_period_or_freq: period,
            flags: sys::PERF_ATTR_FLAG_DISABLED | freq_flag,
            ..Default::default()
        };
        let fd = sys::perf_event_open(&attr, -1, cpu as i32, || {
            format!("perf_event_open (cpu-clock on CPU {cpu}, {sampling:?})")
        })?;
        Ok(PerfEvent { fd })
    }

    /// `counter` on `cpu`, covering every process (pid -1).
    pub fn counter(cpu: u32, counter: Counter) -> Result<PerfEvent> {
        let mut flags = sys::PERF_ATTR_FLAG_DISABLED;
        if counter.exclude_user {
            flags |= sys::PERF_ATTR_FLAG_EXCLUDE_USER;
        }
        if counter.exclude_kernel {
            flags |= sys::PERF_ATTR_FLAG_EXCLUDE_KERNEL;
        }
        let attr = PerfEventAttr {
            type_: counter.type_,
            config: counter.config,
            sample_period_or_freq: counter.period,
            flags,
            ..Default::default()
        };
        let fd = sys::perf_event_open(&attr, -1, cpu as i32, || {
            format!(
                "perf_event_open (type {} config {:#x} on CPU {cpu})",
                counter.type_, counter.config
            )
        })?;
        Ok(PerfEvent { fd })
    }

    /// The tracepoint with tracefs id `id` (see [`crate::tracefs::tracepoint_id`]).
    /// A BPF program attached to it runs on every CPU, so the event is opened on CPU 0 only.
    pub fn tracepoint(id: u64) -> Result<PerfEvent> {
        let attr = PerfEventAttr {
            type_: sys::PERF_TYPE_TRACEPOINT,
            config: id,
            sample_period_or_freq: 1,
            flags: sys::PERF_ATTR_FLAG_DISABLED,
            ..Default::default()
        };
        let fd = sys::perf_event_open(&attr, -1, 0, || {
            format!("perf_event_open (tracepoint id {id})")
        })?;
        Ok(PerfEvent { fd })
    }

    /// The event's file descriptor.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Hands `prog_fd` to the event the old way (`PERF_EVENT_IOC_SET_BPF`).
    pub(crate) fn set_bpf(&self, prog_fd: RawFd) -> Result<()> {
        sys::perf_ioctl(&self.fd, sys::PERF_EVENT_IOC_SET_BPF, prog_fd, || {
            "PERF_EVENT_IOC_SET_BPF".to_string()
        })
    }

    /// Starts the event (`PERF_EVENT_IOC_ENABLE`).
    pub(crate) fn enable(&self) -> Result<()> {
        sys::perf_ioctl(&self.fd, sys::PERF_EVENT_IOC_ENABLE, 0, || {
            "PERF_EVENT_IOC_ENABLE".to_string()
        })
    }
}

impl AsFd for PerfEvent {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_timers_and_reports_bad_cpus() {
        let a = PerfEvent::cpu_clock(0, Sampling::PeriodNs(1_000_000)).unwrap();
        let b = PerfEvent::cpu_clock(0, Sampling::FrequencyHz(99)).unwrap();
        assert_ne!(a.fd(), b.fd());
        a.enable().unwrap();
        let err = PerfEvent::cpu_clock(1 << 20, Sampling::FrequencyHz(99)).unwrap_err();
        assert!(err.errno().is_some());
        assert!(err.to_string().contains("cpu-clock"), "{err}");
    }

    #[test]
    fn opens_counters_and_refuses_unknown_ones() {
        let clock = Counter {
            type_: sys::PERF_TYPE_SOFTWARE,
            config: sys::PERF_COUNT_SW_CPU_CLOCK,
            period: 1_000_000,
            exclude_user: true,
            exclude_kernel: false,
        };
        PerfEvent::counter(0, clock).unwrap().enable().unwrap();
        let unknown = Counter {
            config: u32::MAX as u64,
            ..clock
        };
        let err = PerfEvent::counter(0, unknown).unwrap_err();
        assert!(
            err.errno().is_some() && err.to_string().contains("config"),
            "{err}"
        );
    }

    #[test]
    fn bad_tracepoint_ids_are_refused() {
        assert!(PerfEvent::tracepoint(u32::MAX as u64).is_err());
    }
}
