//! Source text, byte spans into it, and their line/column positions.

/// A half-open byte range `[start, end)` in one [`Source`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Index of the source in the program's list of sources.
    pub source: u16,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(source: u16, start: usize, end: usize) -> Span {
        Span {
            source,
            start: start as u32,
            end: end as u32,
        }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            source: self.source,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// Where a D source came from, as DTrace names it in messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `-s file`: messages say `failed to compile script FILE`.
    Script(String),
    /// `-n text` (or -P/-m/-f/-i): messages say `invalid probe specifier TEXT`.
    Description,
    /// A D library file (built in, or from `-L`/`-x libdir`): its messages start as the
    /// first program's and name the file, `"FILE", line N:`, as DTrace's do.
    Library(String),
}

/// One D source text.
#[derive(Clone, Debug)]
pub struct Source {
    pub origin: Origin,
    pub text: String,
    line_starts: Vec<usize>,
}

impl Source {
    pub fn new(origin: Origin, text: String) -> Source {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Source {
            origin,
            text,
            line_starts,
        }
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = offset as usize;
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let col = offset - self.line_starts[line - 1] + 1;
        (line, col)
    }

    /// The text of a span.
    pub fn slice(&self, span: Span) -> &str {
        let end = (span.end as usize).min(self.text.len());
        let start = (span.start as usize).min(end);
        &self.text[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let s = Source::new(Origin::Description, "ab\ncd\n\nx".into());
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(1), (1, 2));
        assert_eq!(s.line_col(3), (2, 1));
        assert_eq!(s.line_col(6), (3, 1));
        assert_eq!(s.line_col(7), (4, 1));
    }
}
