//! Attachments of loaded programs to events. A [`Link`] owns every descriptor involved, so
//! dropping it — or the process dying, even by SIGKILL — detaches the program.

use std::ffi::CString;
use std::os::fd::OwnedFd;

use crate::error::{Error, Result};
use crate::perf::PerfEvent;
use crate::prog::Program;
use crate::sys::{self, cmd, LinkCreateAttr, RawTracepointAttr};

/// An attached program.
#[derive(Debug)]
pub struct Link {
    /// The BPF link, when the kernel gave us one.
    bpf_link: Option<OwnedFd>,
    /// The perf event the program hangs off, if any; held only to be closed on drop.
    _event: Option<PerfEvent>,
}

impl Link {
    /// Attaches `prog` (a perf-event, tracepoint or kprobe program) to `event` with
    /// `BPF_LINK_CREATE`, falling back to `PERF_EVENT_IOC_SET_BPF`, then enables the event.
    pub fn perf_event(prog: &Program, event: PerfEvent) -> Result<Link> {
        match Link::perf_event_bpf_link(prog, event.fd()) {
            Ok(fd) => {
                event.enable()?;
                Ok(Link {
                    bpf_link: Some(fd),
                    _event: Some(event),
                })
            }
            Err(_) => Link::perf_event_ioctl(prog, event),
        }
    }

    fn perf_event_bpf_link(prog: &Program, event_fd: i32) -> Result<OwnedFd> {
        let mut attr = LinkCreateAttr {
            prog_fd: prog.fd() as u32,
            target_fd: event_fd as u32,
            attach_type: sys::BPF_PERF_EVENT,
            ..Default::default()
        };
        // SAFETY: the attr holds no pointers.
        unsafe { sys::bpf_fd(cmd::LINK_CREATE, &mut attr) }.map_err(|errno| Error::Os {
            what: format!("BPF_LINK_CREATE (perf event) for {:?}", prog.name()),
            errno,
        })
    }

    /// The pre-link way: the perf event itself holds the program until it is closed.
    fn perf_event_ioctl(prog: &Program, event: PerfEvent) -> Result<Link> {
        event.set_bpf(prog.fd())?;
        event.enable()?;
        Ok(Link {
            bpf_link: None,
            _event: Some(event),
        })
    }

    /// Attaches a raw tracepoint program to tracepoint `name` (e.g. `"sched_switch"`), or a
    /// BTF-typed `tp_btf` program to the tracepoint fixed at load time (`name` = `None`).
    pub fn raw_tracepoint(prog: &Program, name: Option<&str>) -> Result<Link> {
        let what = || format!("BPF_RAW_TRACEPOINT_OPEN {name:?} for {:?}", prog.name());
        let cname = name
            .map(CString::new)
            .transpose()
            .map_err(|_| Error::Invalid(format!("{}: name contains NUL", what())))?;
        let mut attr = RawTracepointAttr {
            name: cname.as_ref().map_or(0, |c| c.as_ptr() as u64),
            prog_fd: prog.fd() as u32,
            ..Default::default()
        };
        // SAFETY: name is 0 or points at a NUL-terminated string that outlives the call.
        let fd = unsafe { sys::bpf_fd(cmd::RAW_TRACEPOINT_OPEN, &mut attr) }.map_err(|errno| {
            Error::Os {
                what: what(),
                errno,
            }
        })?;
        Ok(Link {
            bpf_link: Some(fd),
            _event: None,
        })
    }

    /// True if the kernel gave us a BPF link (rather than the perf-ioctl fallback).
    pub fn is_bpf_link(&self) -> bool {
        self.bpf_link.is_some()
    }

    /// A BPF link descriptor made elsewhere (a uprobe_multi link).
    pub(crate) fn from_bpf_link(fd: OwnedFd) -> Link {
        Link {
            bpf_link: Some(fd),
            _event: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::Sampling;
    use crate::testutil::{self, load, read_key0};
    use crate::{tracefs, MapType, ProgramType};
    use std::time::Duration;

    /// Attaches a counter to a cpu-clock timer on CPU 0 with `attach`, keeps CPU 0 busy
    /// for 100 ms and checks the timer fired, then that it stops once the link is dropped.
    /// Returns whether `attach` made a BPF link.
    fn check_profile(sampling: Sampling, attach: fn(&Program, PerfEvent) -> Result<Link>) -> bool {
        let map = testutil::map(MapType::Array, 8, 1);
        let prog = load(ProgramType::PerfEvent, &testutil::counter(&map));
        let link = attach(&prog, PerfEvent::cpu_clock(0, sampling).unwrap()).unwrap();
        drop(prog);
        testutil::pin_to_cpu(0);
        testutil::spin(Duration::from_millis(100));
        let fired = read_key0(&map);
        assert!(fired > 10, "fired {fired} times");
        let was_link = link.is_bpf_link();
        drop(link);
        let after = read_key0(&map);
        testutil::spin(Duration::from_millis(30));
        assert_eq!(
            read_key0(&map),
            after,
            "still firing after the link was dropped"
        );
        was_link
    }

    #[test]
    fn profile_timer_through_a_bpf_link() {
        assert!(check_profile(
            Sampling::PeriodNs(1_000_000),
            Link::perf_event
        ));
    }

    #[test]
    fn profile_timer_through_the_ioctl_fallback() {
        assert!(!check_profile(
            Sampling::FrequencyHz(1000),
            Link::perf_event_ioctl
        ));
    }

    #[test]
    fn tracepoint_through_a_perf_event() {
        let id = tracefs::tracepoint_id("syscalls", "sys_enter_getppid").unwrap();
        let map = testutil::map(MapType::Array, 8, 1);
        let prog = load(ProgramType::Tracepoint, &testutil::counter(&map));
        let link = Link::perf_event(&prog, PerfEvent::tracepoint(id).unwrap()).unwrap();
        assert!(link.is_bpf_link());
        testutil::getppid_times(20);
        assert!(read_key0(&map) >= 20, "{}", read_key0(&map));
    }

    #[test]
    fn raw_tracepoint_by_name() {
        let map = testutil::map(MapType::Array, 8, 1);
        let prog = load(ProgramType::RawTracepoint, &testutil::counter(&map));
        let link = Link::raw_tracepoint(&prog, Some("sys_enter")).unwrap();
        testutil::getppid_times(20);
        assert!(read_key0(&map) >= 20, "{}", read_key0(&map));
        drop(link);
        let err = Link::raw_tracepoint(&prog, Some("no_such_tracepoint")).unwrap_err();
        assert_eq!(err.errno(), Some(libc::ENOENT), "{err}");
        assert!(err.to_string().contains("no_such_tracepoint"));
    }

    #[test]
    fn btf_typed_tracepoint() {
        let btf_id = testutil::vmlinux_btf_id("btf_trace_sched_switch", 8).unwrap();
        let map = testutil::map(MapType::Array, 8, 1);
        let insns = testutil::counter(&map);
        let spec = crate::ProgramSpec {
            expected_attach_type: Some(crate::AttachType::TraceRawTp),
            attach_btf_id: btf_id,
            ..crate::ProgramSpec::new(ProgramType::Tracing, "tp_btf", &insns)
        };
        let prog = Program::load(&spec).unwrap();
        let _link = Link::raw_tracepoint(&prog, None).unwrap();
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(read_key0(&map) >= 5, "{}", read_key0(&map));
    }
}
