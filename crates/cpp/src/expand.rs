//! Macros and their expansion: object-like and function-like macros, `#` and `##`,
//! variadic `...`/`__VA_ARGS__`, and C's rule that a macro is not expanded again inside its
//! own expansion (each token carries the set of macros that produced it).

use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use crate::lex::{tokens, Kind, Token};

#[derive(Clone, Debug)]
pub struct Macro {
    /// Parameter names of a function-like macro (`__VA_ARGS__` last for `...`).
    pub params: Option<Vec<String>>,
    pub variadic: bool,
    pub body: Vec<Token>,
}

/// The macros defined, and expansion with them.
#[derive(Default)]
pub struct Macros {
    pub defs: HashMap<String, Macro>,
}

impl Macros {
    /// Expand every macro in `input`. A function-like macro's name not followed by `(` is
    /// left alone.
    pub fn expand(&self, input: Vec<Token>) -> Result<Vec<Token>, String> {
        let mut input: VecDeque<Token> = input.into();
        let mut out = Vec::new();
        while let Some(t) = input.pop_front() {
            let m = match self.defs.get(&t.text) {
                Some(m) if t.kind == Kind::Ident && !t.hide.contains(&t.text) => m,
                _ => {
                    out.push(t);
                    continue;
                }
            };
            let Some(params) = &m.params else {
                let mut hide = (*t.hide).clone();
                hide.insert(t.text.clone());
                let body = paste(m.body.clone())?;
                prepend(&mut input, body, &Rc::new(hide), &t);
                continue;
            };
            if !input.front().is_some_and(|n| n.is("(")) {
                out.push(t);
                continue;
            }
            input.pop_front();
            let (args, close) = collect_args(&mut input, &t.text)?;
            let args = self.check_arity(&t.text, params, m.variadic, args)?;
            let mut hide: HashSet<String> = t.hide.intersection(&close.hide).cloned().collect();
            hide.insert(t.text.clone());
            let body = self.substitute(m, params, &args)?;
            prepend(&mut input, body, &Rc::new(hide), &t);
        }
        Ok(out)
    }

    /// Match the arguments to the parameters (a variadic macro's extra arguments are one,
    /// commas included); GNU cpp's errors.
    fn check_arity(
        &self,
        name: &str,
        params: &[String],
        variadic: bool,
        mut args: Vec<Vec<Token>>,
    ) -> Result<Vec<Vec<Token>>, String> {
        // `F()` of a macro with no parameter passes none.
        if params.is_empty() && args.len() == 1 && args[0].is_empty() {
            return Ok(Vec::new());
        }
        if variadic && args.len() >= params.len() {
            let rest = args.split_off(params.len() - 1);
            let mut joined = Vec::new();
            for (i, a) in rest.into_iter().enumerate() {
                if i > 0 {
                    joined.push(Token::new(Kind::Punct, ",", 0, false));
                }
                joined.extend(a);
            }
            args.push(joined);
        } else if variadic && args.len() + 1 == params.len() {
            args.push(Vec::new());
        }
        if args.len() < params.len() {
            return Err(format!(
                "macro \"{name}\" requires {} arguments, but only {} given",
                params.len(),
                args.len()
            ));
        }
        if args.len() > params.len() {
            return Err(format!(
                "macro \"{name}\" passed {} arguments, but takes just {}",
                args.len(),
                params.len()
            ));
        }
        Ok(args)
    }

    /// A function-like macro's body with its parameters replaced.
    fn substitute(
        &self,
        m: &Macro,
        params: &[String],
        args: &[Vec<Token>],
    ) -> Result<Vec<Token>, String> {
        let param = |t: &Token| {
            (t.kind == Kind::Ident)
                .then(|| params.iter().position(|p| *p == t.text))
                .flatten()
        };
        let body = &m.body;
        let mut out: Vec<Token> = Vec::new();
        let mut i = 0;
        while i < body.len() {
            let t = &body[i];
            if t.is("#") {
                if let Some(p) = body.get(i + 1).and_then(param) {
                    let mut s = Token::new(Kind::Literal, stringify(&args[p]), t.line, t.space);
                    s.space = t.space;
                    out.push(s);
                    i += 2;
                    continue;
                }
            }
            if let Some(p) = param(t) {
                let pasted =
                    body.get(i + 1).is_some_and(|n| n.is("##")) || (i > 0 && body[i - 1].is("##"));
                let mut arg = if pasted {
                    args[p].clone()
                } else {
                    self.expand(args[p].clone())?
                };
                if let Some(first) = arg.first_mut() {
                    first.space = t.space;
                }
                if arg.is_empty() && pasted {
                    // A placemarker: pasting with an empty argument leaves the other side.
                    arg.push(Token::new(Kind::Other, "", t.line, t.space));
                }
                out.extend(arg);
            } else {
                out.push(t.clone());
            }
            i += 1;
        }
        paste(out)
    }
}

/// Put an expansion in front of the rest of the input: its tokens take the hide set and the
/// place of the macro name they replace.
fn prepend(
    input: &mut VecDeque<Token>,
    body: Vec<Token>,
    hide: &Rc<HashSet<String>>,
    name: &Token,
) {
    for (i, mut b) in body.into_iter().enumerate().rev() {
        if b.kind == Kind::Other && b.text.is_empty() {
            continue;
        }
        let mut h = (**hide).clone();
        h.extend(b.hide.iter().cloned());
        b.hide = Rc::new(h);
        b.line = name.line;
        if i == 0 {
            b.space = name.space;
        }
        input.push_front(b);
    }
}

/// The arguments of a macro call, after its `(`: top-level commas split them; returns them
/// and the closing `)`.
fn collect_args(
    input: &mut VecDeque<Token>,
    name: &str,
) -> Result<(Vec<Vec<Token>>, Token), String> {
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    while let Some(t) = input.pop_front() {
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            if depth == 0 {
                return Ok((args, t));
            }
            depth -= 1;
        } else if t.is(",") && depth == 0 {
            args.push(Vec::new());
            continue;
        }
        if let Some(last) = args.last_mut() {
            last.push(t);
        }
    }
    Err(format!(
        "unterminated argument list invoking macro \"{name}\""
    ))
}

/// `#arg`: the argument's spelling as a string literal.
fn stringify(arg: &[Token]) -> String {
    let mut s = String::from("\"");
    for (i, t) in arg.iter().enumerate() {
        if i > 0 && t.space {
            s.push(' ');
        }
        if t.kind == Kind::Literal {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    s
}

/// Apply the `##` operators of a replacement list.
fn paste(body: Vec<Token>) -> Result<Vec<Token>, String> {
    if !body.iter().any(|t| t.is("##")) {
        return Ok(body);
    }
    let mut out: Vec<Token> = Vec::new();
    let mut iter = body.into_iter().peekable();
    while let Some(t) = iter.next() {
        if t.is("##") {
            let (Some(left), Some(right)) = (out.pop(), iter.next()) else {
                return Err("'##' cannot appear at either end of a macro expansion".into());
            };
            let text = format!("{}{}", left.text, right.text);
            let mut joined = tokens(&text, left.line);
            let kind = match joined.len() {
                0 => Kind::Other,
                _ => joined.remove(0).kind,
            };
            let mut tok = Token::new(kind, text, left.line, left.space);
            tok.hide = left.hide;
            out.push(tok);
        } else {
            out.push(t);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn define(m: &mut Macros, name: &str, params: Option<&[&str]>, body: &str) {
        m.defs.insert(
            name.into(),
            Macro {
                variadic: params.is_some_and(|p| p.last() == Some(&"__VA_ARGS__")),
                params: params.map(|p| p.iter().map(|s| s.to_string()).collect()),
                body: tokens(body, 1),
            },
        );
    }

    fn expanded(m: &Macros, s: &str) -> String {
        let out = m.expand(tokens(s, 1)).expect("expands");
        let mut text = String::new();
        for t in out {
            if t.space && !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&t.text);
        }
        text
    }

    #[test]
    fn expands_as_c_does() {
        let mut m = Macros::default();
        define(&mut m, "X", None, "X + 1");
        define(&mut m, "F", Some(&["a", "b"]), "a * b");
        define(&mut m, "S", Some(&["a"]), "#a");
        define(&mut m, "CAT", Some(&["a", "b"]), "a ## b");
        define(
            &mut m,
            "V",
            Some(&["x", "__VA_ARGS__"]),
            "f(x, __VA_ARGS__)",
        );
        define(&mut m, "ID", Some(&["a"]), "a");
        assert_eq!(expanded(&m, "X"), "X + 1");
        assert_eq!(expanded(&m, "F(1 + 2, (3, 4))"), "1 + 2 * (3, 4)");
        assert_eq!(expanded(&m, "S(a  \"b\")"), "\"a \\\"b\\\"\"");
        assert_eq!(expanded(&m, "CAT(x, 1) CAT(,y)"), "x1 y");
        assert_eq!(expanded(&m, "V(1, 2, 3)"), "f(1, 2, 3)");
        assert_eq!(expanded(&m, "ID(ID(X))"), "X + 1");
        assert_eq!(expanded(&m, "F"), "F");
        assert_eq!(
            m.expand(tokens("F(1)", 1)).map(|_| ()),
            Err("macro \"F\" requires 2 arguments, but only 1 given".into())
        );
    }
}
