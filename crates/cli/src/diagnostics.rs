//! Compile errors as dtrace(1) prints them: `dtrace: failed to compile script F: line N: ...`
//! for scripts, `dtrace: invalid probe specifier TEXT: ...` for descriptions, with the D
//! error tag in front of the location under `-x errtags`.

use dtrace_frontend::{CompileError, Origin, Source};

/// The one-line message for `err`, which happened in `sources`.
pub fn compile_error(err: &CompileError, sources: &[Source], errtags: bool) -> String {
    let tag = if errtags && !err.tag.is_empty() {
        format!("[{}] ", err.tag)
    } else {
        String::new()
    };
    let source = err
        .span
        .and_then(|s| sources.get(s.source as usize))
        .or_else(|| sources.first());
    let Some(source) = source else {
        return format!("dtrace: {tag}{}\n", err.message);
    };
    let message = dtrace_frontend::expand_line_markers(&err.message, sources);
    let line = |source: &Source| {
        err.span
            .map(|s| source.line_col(s.start).0)
            .unwrap_or_default()
    };
    match &source.origin {
        Origin::Script(file) => {
            let line = err
                .span
                .map(|_| format!("line {}: ", line(source)))
                .unwrap_or_default();
            format!("dtrace: failed to compile script {file}: {tag}{line}{message}\n")
        }
        Origin::Description => format!(
            "dtrace: invalid probe specifier {}: {tag}{message}\n",
            source.text
        ),
        // A library file is read while the first program compiles, as in DTrace: that
        // program's words, then where in the library.
        Origin::Library(file) => {
            let at = format!("{tag}\"{file}\", line {}: {message}", line(source));
            match sources.first().map(|s| &s.origin) {
                Some(Origin::Script(first)) => {
                    format!("dtrace: failed to compile script {first}: {at}\n")
                }
                Some(Origin::Description) => format!(
                    "dtrace: invalid probe specifier {}: {at}\n",
                    sources[0].text
                ),
                _ => format!("dtrace: {at}\n"),
            }
        }
    }
}

/// The column of the error, for a `file:line:col` pointer under `-v`.
pub fn location(err: &CompileError, sources: &[Source]) -> Option<String> {
    let span = err.span?;
    let source = sources.get(span.source as usize)?;
    let (line, col) = source.line_col(span.start);
    let name = match &source.origin {
        Origin::Script(f) | Origin::Library(f) => f.as_str(),
        Origin::Description => "<-n>",
    };
    let text = source.text.lines().nth(line - 1).unwrap_or("");
    Some(format!(
        "  --> {name}:{line}:{col}: {}\n   | {text}\n   | {:>width$}\n",
        err.tag,
        "^",
        width = col
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtrace_frontend::Span;

    #[test]
    fn script_and_description_forms() {
        let sources = vec![
            Source::new(
                Origin::Script("x.d".into()),
                "BEGIN\n{\n  x = ;\n}\n".into(),
            ),
            Source::new(Origin::Description, "BEGIN { x = ; }".into()),
        ];
        let err = CompileError::new("D_SYNTAX", "syntax error near \";\"", Span::new(0, 14, 15));
        assert_eq!(
            compile_error(&err, &sources, false),
            "dtrace: failed to compile script x.d: line 3: syntax error near \";\"\n"
        );
        assert_eq!(
            compile_error(&err, &sources, true),
            "dtrace: failed to compile script x.d: [D_SYNTAX] line 3: syntax error near \";\"\n"
        );
        let err = CompileError::new("D_SYNTAX", "syntax error near \";\"", Span::new(1, 12, 13));
        assert_eq!(
            compile_error(&err, &sources, false),
            "dtrace: invalid probe specifier BEGIN { x = ; }: syntax error near \";\"\n"
        );
    }
}
