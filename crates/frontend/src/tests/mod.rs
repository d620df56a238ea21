//! Unit tests of the lexer and parser, with helpers that render the AST back to a
//! fully-parenthesised string.

mod clauses;
mod decls;
mod errors;
mod exprs;
mod fuzz;
mod lexing;
mod providers;

use crate::ast::*;
use crate::{parse, CompileError, Origin, Source};

/// Types known outside the program in these tests.
pub fn test_types(name: &str) -> bool {
    matches!(
        name,
        "uint64_t" | "uint32_t" | "int32_t" | "size_t" | "pid_t" | "uintptr_t"
    )
}

pub fn parse_as(origin: Origin, text: &str) -> Result<Program, CompileError> {
    let source = Source::new(origin, text.to_string());
    parse(&source, 0, &test_types)
}

pub fn program(text: &str) -> Program {
    parse_as(Origin::Description, text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"))
}

pub fn clauses(text: &str) -> Vec<Clause> {
    program(text)
        .items
        .into_iter()
        .filter_map(|item| match item {
            Item::Clause(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Parses `text` as the only statement of a `BEGIN` clause and renders it.
pub fn expr(text: &str) -> String {
    let body = clauses(&format!("BEGIN {{ {text}; }}"))
        .remove(0)
        .body
        .expect("body");
    match &body[..] {
        [Stmt::Expr(e, _)] => render(e),
        other => panic!("{text:?}: not one expression statement: {other:?}"),
    }
}

/// The error for `text` (a `-n` description) as `(tag, message, line, column)`.
pub fn error(text: &str) -> (&'static str, String, usize, usize) {
    error_as(Origin::Description, text)
}

pub fn error_as(origin: Origin, text: &str) -> (&'static str, String, usize, usize) {
    let source = Source::new(origin, text.to_string());
    let e = parse(&source, 0, &test_types).expect_err(text);
    let (line, col) = source.line_col(e.span.expect("placed").start);
    (e.tag, e.message, line, col)
}

pub fn render(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int {
            value,
            unsigned,
            longs,
            ..
        } => format!(
            "{value}{}{}",
            if *unsigned { "u" } else { "" },
            "l".repeat(usize::from(*longs))
        ),
        ExprKind::Char(c) => format!("'{}'", char::from(*c).escape_default()),
        ExprKind::Str(s) => format!("{:?}", String::from_utf8_lossy(s)),
        ExprKind::Ident(n) => n.clone(),
        ExprKind::Macro(MacroVar::Arg(n)) => format!("${n}"),
        ExprKind::Macro(MacroVar::StrArg(n)) => format!("$${n}"),
        ExprKind::Macro(MacroVar::Named(n)) => format!("${n}"),
        ExprKind::SelfVar(n) => format!("self->{n}"),
        ExprKind::ThisVar(n) => format!("this->{n}"),
        ExprKind::Aggregation(n) => format!("@{n}"),
        ExprKind::Symbol { module, name } => {
            format!("{}`{name}", module.as_deref().unwrap_or(""))
        }
        ExprKind::Unary { op, operand } => {
            let o = render(operand);
            match op {
                UnaryOp::PostInc => format!("({o}++)"),
                UnaryOp::PostDec => format!("({o}--)"),
                _ => {
                    let sym = match op {
                        UnaryOp::Neg => "-",
                        UnaryOp::Plus => "+",
                        UnaryOp::Not => "!",
                        UnaryOp::BitNot => "~",
                        UnaryOp::Deref => "*",
                        UnaryOp::AddrOf => "&",
                        UnaryOp::PreInc => "++",
                        _ => "--",
                    };
                    format!("({sym}{o})")
                }
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", render(lhs), binop(*op), render(rhs))
        }
        ExprKind::Assign { op, lhs, rhs } => format!(
            "({} {}= {})",
            render(lhs),
            op.map_or("", binop),
            render(rhs)
        ),
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
        } => format!(
            "({} ? {} : {})",
            render(cond),
            render(then),
            render(otherwise)
        ),
        ExprKind::Comma(a, b) => format!("({}, {})", render(a), render(b)),
        ExprKind::Call { name, args, .. } => format!("{name}({})", list(args)),
        ExprKind::CallOf { callee, args } => format!("({})({})", render(callee), list(args)),
        ExprKind::Index { base, args } => format!("{}[{}]", render(base), list(args)),
        ExprKind::Member { base, name, arrow } => {
            format!("{}{}{name}", render(base), if *arrow { "->" } else { "." })
        }
        ExprKind::Cast { ty, operand } => format!("(({}) {})", type_name(ty), render(operand)),
        ExprKind::SizeofType(ty) => format!("sizeof({})", type_name(ty)),
        ExprKind::SizeofExpr(x) => format!("sizeof({})", render(x)),
        ExprKind::Offsetof { ty, member } => format!("offsetof({}, {member})", type_name(ty)),
        ExprKind::Stringof(x) => format!("stringof({})", render(x)),
        ExprKind::Xlate { ty, operand } => {
            format!("xlate<{}>({})", type_name(ty), render(operand))
        }
    }
}

fn list(args: &[Expr]) -> String {
    args.iter().map(render).collect::<Vec<_>>().join(", ")
}

fn binop(op: BinaryOp) -> &'static str {
    use BinaryOp::*;
    match op {
        Mul => "*",
        Div => "/",
        Mod => "%",
        Add => "+",
        Sub => "-",
        Shl => "<<",
        Shr => ">>",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        Eq => "==",
        Ne => "!=",
        BitAnd => "&",
        BitXor => "^",
        BitOr => "|",
        LogAnd => "&&",
        LogXor => "^^",
        LogOr => "||",
    }
}

pub fn type_spec(spec: &TypeSpec) -> String {
    let (base, quals) = match spec {
        TypeSpec::Builtin { words, qualifiers } => (words.join(" "), qualifiers),
        TypeSpec::Named { name, qualifiers } => (name.clone(), qualifiers),
        TypeSpec::Struct {
            union,
            name,
            members,
            qualifiers,
        } => {
            let kw = if *union { "union" } else { "struct" };
            let body = members.as_ref().map_or(String::new(), |m| {
                format!(" {{{}}}", m.iter().map(decl).collect::<Vec<_>>().join(" "))
            });
            (
                format!("{kw} {}{body}", name.as_deref().unwrap_or("<anon>")),
                qualifiers,
            )
        }
        TypeSpec::Enum {
            name,
            variants,
            qualifiers,
        } => {
            let body = variants.as_ref().map_or(String::new(), |v| {
                let items: Vec<String> = v
                    .iter()
                    .map(|(n, e, _)| match e {
                        Some(e) => format!("{n}={}", render(e)),
                        None => n.clone(),
                    })
                    .collect();
                format!(" {{{}}}", items.join(", "))
            });
            (
                format!("enum {}{body}", name.as_deref().unwrap_or("<anon>")),
                qualifiers,
            )
        }
    };
    quals.iter().map(|q| format!("{q} ")).collect::<String>() + &base
}

pub fn parts(parts: &[DeclaratorPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            DeclaratorPart::Pointer { qualifiers } if qualifiers.is_empty() => "*".to_string(),
            DeclaratorPart::Pointer { qualifiers } => format!("*{}", qualifiers.join(" ")),
            DeclaratorPart::Array(None) => "[]".to_string(),
            DeclaratorPart::Array(Some(n)) => format!("[{}]", render(n)),
            DeclaratorPart::AssocArray(keys) => format!(
                "[{}]",
                keys.iter().map(type_name).collect::<Vec<_>>().join(", ")
            ),
            DeclaratorPart::Function(params) => format!(
                "({})",
                params.iter().map(type_name).collect::<Vec<_>>().join(", ")
            ),
        })
        .collect()
}

pub fn type_name(ty: &TypeName) -> String {
    let p = parts(&ty.declarator);
    if p.is_empty() {
        type_spec(&ty.spec)
    } else {
        format!("{} {p}", type_spec(&ty.spec))
    }
}

/// `class spec name<parts>[:bits], ...;`
pub fn decl(d: &Decl) -> String {
    let class = match d.class {
        Some(StorageClass::Self_) => "self ",
        Some(StorageClass::This) => "this ",
        Some(StorageClass::Extern) => "extern ",
        Some(StorageClass::Static) => "static ",
        Some(StorageClass::Register) => "register ",
        Some(StorageClass::Typedef) => "typedef ",
        None => "",
    };
    let decls: Vec<String> = d
        .declarators
        .iter()
        .map(|x| {
            let bits = x
                .bitfield
                .as_ref()
                .map_or(String::new(), |b| format!(":{}", render(b)));
            format!("{}{}{bits}", x.name, parts(&x.parts))
        })
        .collect();
    format!("{class}{} {};", type_spec(&d.spec), decls.join(", "))
}
