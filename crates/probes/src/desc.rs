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

/// Why a description is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescriptionError(pub String);

impl Description {
    pub fn parse(text: &str) -> Result<Description, DescriptionError> {
        let text = text.trim();
        let fields: Vec<&str> = text.split(':').collect();
        if fields.len() > 4 {
            return Err(DescriptionError(format!(
                "invalid probe description \"{text}\": Overspecified probe description"
            )));
        }
        let mut all = ["", "", "", ""];
        let skip = 4 - fields.len();
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
}
