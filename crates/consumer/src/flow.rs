//! Flow indentation (`-F`, the `flowindent` option): a probe named `entry` (or ending in
//! `-entry`) shows its function after `->` and indents what follows by two columns, one
//! named `return` (or ending in `-return`) takes the indentation back and shows `<-`
//! (`=>` and `<=` for system calls); other probes show `| function:name`. Several clauses
//! on one entry probe indent once, as DTrace's heuristic has it.

use dtrace_abi::desc::Probe;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Entry,
    Return,
    None,
}

/// The indentation so far and the last firing shown.
#[derive(Default)]
pub(crate) struct FlowIndent {
    indent: usize,
    /// The probe id and clause statement of the last firing shown.
    last: Option<(u32, u32)>,
}

/// Whether probe name `name` is `word` or ends in `-word`.
fn names(name: &str, word: &str) -> bool {
    name.strip_suffix(word)
        .is_some_and(|rest| rest.is_empty() || rest.ends_with('-'))
}

impl FlowIndent {
    /// The function column of a firing of `probe` by the clause numbered `statement`.
    pub(crate) fn column(&mut self, probe: &Probe, statement: u32) -> String {
        let syscall = probe.provider == "syscall";
        let mut flow = if names(&probe.name, "entry") {
            Flow::Entry
        } else if names(&probe.name, "return") {
            Flow::Return
        } else {
            Flow::None
        };
        if flow == Flow::Entry
            && self
                .last
                .is_some_and(|(id, stmt)| id == probe.id && stmt != statement)
        {
            flow = Flow::None;
        }
        if flow == Flow::Return {
            self.indent = self.indent.saturating_sub(2);
        }
        let pad = " ".repeat(self.indent);
        let column = match flow {
            Flow::Entry => format!(
                "{pad}{}{}",
                if syscall { " => " } else { " -> " },
                probe.function
            ),
            Flow::Return => format!(
                "{pad}{}{}",
                if syscall { " <= " } else { " <- " },
                probe.function
            ),
            Flow::None => format!("{pad}| {}:{}", probe.function, probe.name),
        };
        if flow == Flow::Entry {
            self.indent += 2;
        }
        self.last = Some((probe.id, statement));
        column
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(id: u32, provider: &str, function: &str, name: &str) -> Probe {
        Probe {
            id,
            provider: provider.into(),
            module: String::new(),
            function: function.into(),
            name: name.into(),
        }
    }

    #[test]
    fn entries_indent_and_returns_take_it_back() {
        let mut f = FlowIndent::default();
        assert_eq!(f.column(&probe(1, "pid1", "main", "entry"), 0), " -> main");
        assert_eq!(
            f.column(&probe(2, "pid1", "work", "entry"), 0),
            "   -> work"
        );
        assert_eq!(
            f.column(&probe(3, "pid1", "work", "tick"), 0),
            "    | work:tick"
        );
        assert_eq!(
            f.column(&probe(4, "pid1", "work", "return"), 0),
            "   <- work"
        );
        assert_eq!(
            f.column(&probe(5, "syscall", "read", "entry"), 0),
            "   => read"
        );
        assert_eq!(
            f.column(&probe(6, "syscall", "read", "return"), 0),
            "   <= read"
        );
        assert_eq!(f.column(&probe(7, "pid1", "main", "return"), 0), " <- main");
        // A second clause on the same entry probe does not indent again.
        assert_eq!(f.column(&probe(8, "x", "f", "method-entry"), 0), " -> f");
        assert_eq!(
            f.column(&probe(8, "x", "f", "method-entry"), 1),
            "  | f:method-entry"
        );
        assert!(!names("carpentry", "entry"));
    }
}
