//! Probe providers: probe descriptions, discovery, matching, listing and attaching.
//!
//! [`Catalog`] knows every probe of every provider (creating `profile-N` probes when a
//! description names them, as DTrace does), matches descriptions against them, and attaches
//! a loaded program to a probe. One module per provider.

mod desc;
mod dtrace;
mod glob;
mod profile;

pub use desc::{Description, DescriptionError};
pub use dtrace::DtraceProbe;
pub use glob::glob_match;

use dtrace_backend::program::ProbeSite;
use dtrace_runtime::{Link, Program};

/// How a probe is made to fire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// BEGIN, END or ERROR: run by the consumer itself.
    Dtrace(DtraceProbe),
    /// A timer every `period_ns`, on every online CPU (`profile`) or on one (`tick`).
    Timer { period_ns: u64, every_cpu: bool },
}

/// A probe: where it is and how to attach to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub site: ProbeSite,
    pub attach: Attach,
}

/// All probes known so far.
#[derive(Debug)]
pub struct Catalog {
    probes: Vec<Probe>,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::new()
    }
}

impl Catalog {
    pub fn new() -> Catalog {
        let mut probes = dtrace::probes();
        let next = probes.len() as u32 + 1;
        probes.extend(profile::standard_probes(next));
        Catalog { probes }
    }

    /// Probes matching `desc`, creating a `profile`/`tick` probe the description names
    /// exactly when it does not exist yet.
    pub fn matching(&mut self, desc: &Description) -> Vec<Probe> {
        if let Some(probe) = profile::on_demand(desc, self.probes.len() as u32 + 1) {
            if !self
                .probes
                .iter()
                .any(|p| p.site.name == probe.site.name && p.site.provider == probe.site.provider)
            {
                self.probes.push(probe);
            }
        }
        self.probes
            .iter()
            .filter(|p| desc.matches(&p.site))
            .cloned()
            .collect()
    }

    pub fn all(&self) -> &[Probe] {
        &self.probes
    }
}

impl Probe {
    /// Attach `prog` so it runs when the probe fires. Consumer-run probes need no links.
    pub fn attach(&self, prog: &Program) -> dtrace_runtime::Result<Vec<Link>> {
        match &self.attach {
            Attach::Dtrace(_) => Ok(Vec::new()),
            Attach::Timer {
                period_ns,
                every_cpu,
            } => profile::attach(prog, *period_ns, *every_cpu),
        }
    }
}

/// The `-l` listing header.
pub fn list_header() -> String {
    format!(
        "{:>5} {:>10} {:>17} {:>33} {}\n",
        "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME"
    )
}

/// One `-l` line.
pub fn list_line(site: &ProbeSite) -> String {
    format!(
        "{:>5} {:>10} {:>17} {:>33} {}\n",
        site.id, site.provider, site.module, site.function, site.name
    )
}
