//! Stability attributes, as DTrace states them for each provider (`dtrace -lv`): the
//! stability of the names of the probe description's fields and of the arguments, their data
//! semantics, and the dependency class.
//!
//! The values are those of Oracle Linux DTrace's providers (`rawtp` and `sdt` as its `rawtp`
//! and `sdt`, `fbt`, `syscall`, `profile`, `dtrace`, and illumos' `pid` and USDT ones).
//! A probe's description attributes are the minimum over its provider, module, function and
//! name, where an empty module or function does not count (as DTrace computes them).

use std::fmt;

use dtrace_backend::program::{ProbeContext, ProbeSite, UprobeKind};

use crate::Description;

/// How stable a name or its meaning is, least stable first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stability {
    Internal,
    Private,
    Obsolete,
    External,
    Unstable,
    Evolving,
    Stable,
    Standard,
}

/// What the interface depends on, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Unknown,
    Cpu,
    Platform,
    Group,
    Isa,
    Common,
}

impl fmt::Display for Stability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stability::Internal => "Internal",
            Stability::Private => "Private",
            Stability::Obsolete => "Obsolete",
            Stability::External => "External",
            Stability::Unstable => "Unstable",
            Stability::Evolving => "Evolving",
            Stability::Stable => "Stable",
            Stability::Standard => "Standard",
        })
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Class::Unknown => "Unknown",
            Class::Cpu => "CPU",
            Class::Platform => "Platform",
            Class::Group => "Group",
            Class::Isa => "ISA",
            Class::Common => "Common",
        })
    }
}

/// One attribute triple: name stability, data stability, dependency class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    pub names: Stability,
    pub data: Stability,
    pub class: Class,
}

impl Attr {
    const fn new(names: Stability, data: Stability, class: Class) -> Attr {
        Attr { names, data, class }
    }

    fn min(self, other: Attr) -> Attr {
        Attr {
            names: self.names.min(other.names),
            data: self.data.min(other.data),
            class: self.class.min(other.class),
        }
    }

    /// An attribute as the `amin` option writes it, `names[/data[/class]]` (any case);
    /// a part left out is the highest there is.
    pub fn parse(text: &str) -> Option<Attr> {
        let mut attr = Attr::new(Standard, Standard, Common);
        let mut parts = text.split('/');
        let stability = |p: &str| {
            STABILITIES
                .into_iter()
                .find(|s| s.to_string().eq_ignore_ascii_case(p))
        };
        if let Some(p) = parts.next().filter(|p| !p.is_empty()) {
            attr.names = stability(p)?;
        }
        if let Some(p) = parts.next().filter(|p| !p.is_empty()) {
            attr.data = stability(p)?;
        }
        if let Some(p) = parts.next().filter(|p| !p.is_empty()) {
            attr.class = CLASSES
                .into_iter()
                .find(|c| c.to_string().eq_ignore_ascii_case(p))?;
        }
        parts.next().is_none().then_some(attr)
    }

    /// Whether any of the three is below `min`'s.
    pub fn below(&self, min: &Attr) -> bool {
        self.names < min.names || self.data < min.data || self.class < min.class
    }

    /// The three `-lv` lines of a section.
    fn lines(&self) -> String {
        format!(
            "\t\tIdentifier Names: {}\n\t\tData Semantics:   {}\n\t\tDependency Class: {}\n",
            self.names, self.data, self.class
        )
    }
}

impl fmt::Display for Attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.names, self.data, self.class)
    }
}

use Class::*;
use Stability::*;

const STABILITIES: [Stability; 8] = [
    Internal, Private, Obsolete, External, Unstable, Evolving, Stable, Standard,
];
const CLASSES: [Class; 6] = [Unknown, Cpu, Platform, Group, Isa, Common];

/// The attributes of a description whose provider is not named (or is a glob).
const UNNAMED_PROVIDER: Attr = Attr::new(Unstable, Unstable, Common);

/// A provider's attributes: provider, module, function, name, arguments.
type ProviderAttrs = [Attr; 5];

const DTRACE: ProviderAttrs = [
    Attr::new(Stable, Stable, Common),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Unknown),
    Attr::new(Stable, Stable, Common),
    Attr::new(Stable, Stable, Common),
];
const PROFILE: ProviderAttrs = [
    Attr::new(Evolving, Evolving, Common),
    Attr::new(Unstable, Unstable, Unknown),
    Attr::new(Private, Private, Unknown),
    Attr::new(Evolving, Evolving, Common),
    Attr::new(Evolving, Evolving, Common),
];
const SYSCALL: ProviderAttrs = [
    Attr::new(Evolving, Evolving, Common),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Isa),
    Attr::new(Evolving, Evolving, Common),
    Attr::new(Private, Private, Isa),
];
/// `sdt` and `rawtp` (the same in Oracle Linux DTrace).
const TRACEPOINT: ProviderAttrs = [
    Attr::new(Evolving, Evolving, Isa),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Isa),
    Attr::new(Private, Private, Isa),
];
/// `proc`, `sched` and `io`, as DTrace gives them.
const PROC_SCHED: ProviderAttrs = [
    Attr::new(Evolving, Evolving, Isa),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Unknown),
    Attr::new(Evolving, Evolving, Isa),
    Attr::new(Evolving, Evolving, Isa),
];
const FBT: ProviderAttrs = [
    Attr::new(Evolving, Evolving, Common),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Isa),
    Attr::new(Evolving, Evolving, Common),
    Attr::new(Private, Private, Isa),
];
const PID: ProviderAttrs = [
    Attr::new(Evolving, Evolving, Isa),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Unknown),
    Attr::new(Evolving, Evolving, Isa),
    Attr::new(Private, Private, Unknown),
];
const USDT: ProviderAttrs = [
    Attr::new(Evolving, Evolving, Isa),
    Attr::new(Private, Private, Unknown),
    Attr::new(Private, Private, Unknown),
    Attr::new(Evolving, Evolving, Isa),
    Attr::new(Evolving, Evolving, Isa),
];

fn provider_attrs(site: &ProbeSite) -> &'static ProviderAttrs {
    match (&site.context, site.provider.as_str()) {
        (ProbeContext::Uprobe(u), _) => match u.kind {
            UprobeKind::Usdt(_) => &USDT,
            UprobeKind::Entry | UprobeKind::Return => &PID,
        },
        // A USDT probe with declared argument types.
        (ProbeContext::Mapped(m), _) if matches!(*m.base, ProbeContext::Uprobe(_)) => &USDT,
        (_, "dtrace") => &DTRACE,
        // `cpc` has `profile`'s attributes in Oracle's DTrace.
        (_, "profile" | "cpc") => &PROFILE,
        (_, "syscall") => &SYSCALL,
        (_, "fbt") => &FBT,
        (ProbeContext::Mapped(_), _) => &PROC_SCHED,
        _ => &TRACEPOINT,
    }
}

/// The probe description attributes of `site` (the minimum over its non-empty fields) and
/// its argument attributes.
pub fn probe_attrs(site: &ProbeSite) -> (Attr, Attr) {
    let [provider, module, function, name, args] = *provider_attrs(site);
    let mut desc = provider;
    if !site.module.is_empty() {
        desc = desc.min(module);
    }
    if !site.function.is_empty() {
        desc = desc.min(function);
    }
    desc = desc.min(name);
    (desc, args)
}

/// The attributes of a clause's probe description `desc`, of which `site` is a probe it
/// matched: those of its provider's fields it names without a glob, as DTrace computes
/// them; Unstable when it names no provider, or by a glob, or matches nothing.
pub fn description_attrs(desc: &Description, site: Option<&ProbeSite>) -> Attr {
    let glob = |f: &str| f.is_empty() || f.contains(['*', '?', '[']);
    let Some(site) = site.filter(|_| !glob(&desc.provider)) else {
        return UNNAMED_PROVIDER;
    };
    let [provider, module, function, name, _] = *provider_attrs(site);
    let mut attr = provider;
    for (field, a) in [
        (&desc.module, module),
        (&desc.function, function),
        (&desc.name, name),
    ] {
        if !glob(field) {
            attr = attr.min(a);
        }
    }
    attr
}

/// The `-lv` attribute sections of a probe, then its `Argument Types` header (the caller
/// adds the `args[N]` lines, or `None`).
pub fn sections(site: &ProbeSite) -> String {
    let (desc, args) = probe_attrs(site);
    format!(
        "\n\tProbe Description Attributes\n{}\n\tArgument Attributes\n{}\n\tArgument Types\n",
        desc.lines(),
        args.lines()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(provider: &str, module: &str, function: &str, name: &str) -> ProbeSite {
        ProbeSite {
            id: 1,
            provider: provider.into(),
            module: module.into(),
            function: function.into(),
            name: name.into(),
            context: ProbeContext::ArgArray,
        }
    }

    #[test]
    fn minimum_over_the_named_fields() {
        let (desc, args) = probe_attrs(&site("dtrace", "", "", "BEGIN"));
        assert_eq!(desc, Attr::new(Stable, Stable, Common));
        assert_eq!(args, Attr::new(Stable, Stable, Common));
        let (desc, args) = probe_attrs(&site("syscall", "vmlinux", "read", "entry"));
        assert_eq!(desc, Attr::new(Private, Private, Unknown));
        assert_eq!(args, Attr::new(Private, Private, Isa));
        let text = sections(&site("sdt", "sched", "", "sched_switch"));
        assert!(text.starts_with(
            "\n\tProbe Description Attributes\n\t\tIdentifier Names: Private\n\t\tData Semantics:   Private\n\t\tDependency Class: Unknown\n\n\tArgument Attributes\n"
        ));
        assert!(text.ends_with("\t\tDependency Class: ISA\n\n\tArgument Types\n"));
    }
}
