//! Probe descriptions: `provider:module:function:name`, fields filled from the right when
//! fewer are given (`BEGIN` is a name, `read:entry` a function and name), each a glob.

use dtrace_backend::program::ProbeSite;

use crate::glob::glob_match;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Description {
    pub provider: String,
    pub module: String,
    pub function: String,
    pub name: String,
}

/// Which field a description's last part names: how `-P`, `-m`, `-f` read their argument
/// (`-f read` is `::read:`) and `-n`, `-i`, `-s` theirs (`read` is `:::read`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProbeSpec {
    Provider,
    Module,
    Function,
    #[default]
    Name,
}

impl ProbeSpec {
    /// How many fields a description may give.
    fn fields(self) -> usize {
        match self {
            ProbeSpec::Provider => 1,
            ProbeSpec::Module => 2,
            ProbeSpec::Function => 3,
            ProbeSpec::Name => 4,
        }
    }

    /// What DTrace calls what is being specified, for errors (`when specifying functions`).
    pub fn what(self) -> &'static str {
        match self {
            ProbeSpec::Provider => "providers",
            ProbeSpec::Module => "modules",
            ProbeSpec::Function => "functions",
            ProbeSpec::Name => "names",
        }
    }
}

/// Why a description is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescriptionError(pub String);

impl Description {
    pub fn parse(text: &str) -> Result<Description, DescriptionError> {
        Description::parse_as(text, ProbeSpec::Name)
    }

    /// A description whose last part names the field `spec` says, the parts before it the
    /// fields before that one. As DTrace reads a description from its end, a leading `:`
    /// ends the description (`-f ::read:` is `:read::`, `-f :genunix::` is `genunix:::`).
    pub fn parse_as(text: &str, spec: ProbeSpec) -> Result<Description, DescriptionError> {
        let text = text.trim();
        let fields: Vec<&str> = text.strip_prefix(':').unwrap_or(text).split(':').collect();
        if fields.len() > spec.fields() {
            return Err(DescriptionError(format!(
                "invalid probe description \"{text}\": Overspecified probe description"
            )));
        }
        let mut all = ["", "", "", ""];
        let skip = spec.fields() - fields.len();
        for (i, f) in fields.iter().enumerate() {
            all[skip + i] = f;
        }
        Ok(Description {
            provider: all[0].to_string(),
            module: all[1].to_string(),
            function: all[2].to_string(),
            name: all[3].to_string(),
        })
    }

    /// The description that names `site` alone: its fields, glob characters escaped.
    pub fn exact(site: &ProbeSite) -> Description {
        let escape = |field: &str| {
            let mut out = String::with_capacity(field.len());
            for c in field.chars() {
                if matches!(c, '*' | '?' | '[' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        };
        Description {
            provider: escape(&site.provider),
            module: escape(&site.module),
            function: escape(&site.function),
            name: escape(&site.name),
        }
    }

    pub fn matches(&self, site: &ProbeSite) -> bool {
        glob_match(&self.provider, &site.provider)
            && glob_match(&self.module, &site.module)
            && glob_match(&self.function, &site.function)
            && glob_match(&self.name, &site.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_from_the_right() {
        let d = Description::parse("BEGIN").unwrap();
        assert_eq!((d.provider.as_str(), d.name.as_str()), ("", "BEGIN"));
        let d = Description::parse("syscall::read:entry").unwrap();
        assert_eq!(d.provider, "syscall");
        assert_eq!(d.module, "");
        assert_eq!(d.function, "read");
        assert_eq!(d.name, "entry");
        let d = Description::parse("read:entry").unwrap();
        assert_eq!((d.function.as_str(), d.name.as_str()), ("read", "entry"));
        assert!(Description::parse("a:b:c:d:e").is_err());
    }

    #[test]
    fn a_spec_names_the_last_field() {
        let d = Description::parse_as("read", ProbeSpec::Function).unwrap();
        assert_eq!((d.function.as_str(), d.name.as_str()), ("read", ""));
        let d = Description::parse_as("syscall:vmlinux", ProbeSpec::Module).unwrap();
        assert_eq!(
            (d.provider.as_str(), d.module.as_str()),
            ("syscall", "vmlinux")
        );
        let d = Description::parse_as("profile", ProbeSpec::Provider).unwrap();
        assert_eq!((d.provider.as_str(), d.module.as_str()), ("profile", ""));
        let d = Description::parse_as("::read:", ProbeSpec::Function).unwrap();
        assert_eq!((d.module.as_str(), d.function.as_str()), ("read", ""));
        let d = Description::parse_as(":genunix::", ProbeSpec::Function).unwrap();
        assert_eq!(d.provider, "genunix");
        assert!(Description::parse_as(":genunix::", ProbeSpec::Module).is_err());
        let d = Description::parse(":::BEGIN").unwrap();
        assert_eq!((d.provider.as_str(), d.name.as_str()), ("", "BEGIN"));
        assert_eq!(
            Description::parse_as("profile:::", ProbeSpec::Provider)
                .unwrap_err()
                .0,
            "invalid probe description \"profile:::\": Overspecified probe description"
        );
    }

    #[test]
    fn an_exact_description_matches_its_probe_alone() {
        let site = |function: &str| ProbeSite {
            id: 1,
            provider: "pid1".into(),
            module: "a.out".into(),
            function: function.into(),
            name: "entry".into(),
            context: dtrace_backend::program::ProbeContext::ArgArray,
        };
        let d = Description::exact(&site("operator*"));
        assert!(d.matches(&site("operator*")));
        assert!(!d.matches(&site("operator*=")));
    }
}
