//! The abstract syntax tree of a D program; every node carries the [`Span`] it came from.

use crate::span::Span;

/// The name of the state a return probe sees of its function's entry (`entry->arg0`).
pub const ENTRY: &str = "entry";

/// A whole D program: the items of one or more `-n`/`-s` sources, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Clause(Clause),
    Pragma(Pragma),
    Decl(Decl),
    Inline(Inline),
    Translator(Translator),
    Provider(Provider),
}

/// A use of a macro argument (`$N`, `$$N`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MacroArgUse {
    pub n: u32,
    /// `$$N`: as a string.
    pub string: bool,
    /// In a probe description (whose text is expanded apart); the span is then the
    /// description's.
    pub in_description: bool,
    pub span: Span,
}

impl Item {
    /// The macro arguments (`$N`, `$$N`) the item uses: in its probe descriptions,
    /// predicate and statements, or an inline's value.
    pub fn macro_args(&self) -> Vec<MacroArgUse> {
        let mut found = Vec::new();
        let mut exprs: Vec<&Expr> = Vec::new();
        match self {
            Item::Clause(c) => {
                for d in &c.probes {
                    found.extend(description_args(d));
                }
                exprs.extend(c.expressions());
            }
            Item::Inline(i) => exprs.push(&i.value),
            _ => {}
        }
        while let Some(e) = exprs.pop() {
            if let ExprKind::Macro(m @ (MacroVar::Arg(n) | MacroVar::StrArg(n))) = &e.kind {
                found.push(MacroArgUse {
                    n: *n,
                    string: matches!(m, MacroVar::StrArg(_)),
                    in_description: false,
                    span: e.span,
                });
            }
            e.for_each_child(|c| exprs.push(c));
        }
        found
    }
}

/// The macro arguments a probe description names (`syscall::$1:entry`, `$$2`).
fn description_args(d: &ProbeDesc) -> Vec<MacroArgUse> {
    let mut found = Vec::new();
    let mut rest = d.text.as_str();
    while let Some(i) = rest.find('$') {
        let after = &rest[i + 1..];
        let string = after.starts_with('$');
        let after = after.strip_prefix('$').unwrap_or(after);
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse() {
            found.push(MacroArgUse {
                n,
                string,
                in_description: true,
                span: d.span,
            });
        }
        rest = &rest[i + 1..];
    }
    found
}

/// `descriptions /predicate/ { statements }`
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    /// One or more probe descriptions, as written (`syscall::read*:entry`, `BEGIN`, `pid$target:a.out:main:entry`).
    pub probes: Vec<ProbeDesc>,
    pub predicate: Option<Expr>,
    /// `None` when the clause has no `{ ... }` at all (DTrace then applies the default action).
    pub body: Option<Vec<Stmt>>,
    pub span: Span,
    /// Where the token after the predicate is (its body's `{`): DTrace types the predicate
    /// once it has read that token, so its errors carry that token's line.
    pub after_predicate: Option<Span>,
}

impl Clause {
    /// The clause's own expressions: its predicate, then those of its statements (at any
    /// depth of `if` and blocks); not their operands.
    pub fn expressions(&self) -> Vec<&Expr> {
        let mut exprs: Vec<&Expr> = self.predicate.iter().collect();
        let mut stmts: Vec<&Stmt> = self.body.iter().flatten().collect();
        while let Some(s) = stmts.pop() {
            match s {
                Stmt::Expr(e, _) => exprs.push(e),
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                    ..
                } => {
                    exprs.push(cond);
                    stmts.extend(then.iter().chain(otherwise.iter().flatten()));
                }
                Stmt::Block(body, _) => stmts.extend(body),
            }
        }
        exprs
    }

    /// The `args[N]` the clause reads, by index (`None` for an index that is not an
    /// integer literal: any), in the order met, each once.
    pub fn args_read(&self) -> Vec<Option<u64>> {
        let mut read = Vec::new();
        let mut pending = self.expressions();
        while let Some(e) = pending.pop() {
            if let ExprKind::Index { base, args } = &e.kind {
                if matches!(&base.kind, ExprKind::Ident(n) if n == "args") {
                    let index = match args.as_slice() {
                        [a] => match a.kind {
                            ExprKind::Int { value, .. } => Some(value),
                            _ => None,
                        },
                        _ => None,
                    };
                    if !read.contains(&index) {
                        read.push(index);
                    }
                }
            }
            e.for_each_child(|c| pending.push(c));
        }
        read
    }

    /// Whether the clause reads the state its function's entry saved (`entry->arg0`,
    /// `entry->timestamp`): its return probes then need their entry probes.
    pub fn reads_entry(&self) -> bool {
        let mut pending = self.expressions();
        while let Some(e) = pending.pop() {
            if e.is_entry_member() {
                return true;
            }
            e.for_each_child(|c| pending.push(c));
        }
        false
    }
}

/// A probe description exactly as written; macro variables (`$target`) are still unexpanded.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeDesc {
    pub text: String,
    pub span: Span,
}

/// `#pragma D option name=value`, `#pragma D depends_on ...`, `#pragma D attributes ...`, `#pragma D binding ...`, ...
#[derive(Clone, Debug, PartialEq)]
pub struct Pragma {
    /// The words after `#pragma`, e.g. `["D", "option", "quiet"]` or `["D", "option", "bufsize=16m"]`.
    pub words: Vec<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// An expression statement, and where the token after it (its `;`, or the `}` of a
    /// last statement without one) is: DTrace makes the nodes that end the expression once
    /// it has read that token, so their errors carry that token's line.
    Expr(Expr, Span),
    /// `if (cond) stmt-or-block [else stmt-or-block]` (Oracle D).
    If {
        cond: Expr,
        then: Vec<Stmt>,
        otherwise: Option<Vec<Stmt>>,
        span: Span,
    },
    /// A bare `{ ... }` block.
    Block(Vec<Stmt>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// The height of the expression's tree (a leaf is 1), found without recursion: a tree
    /// may be deeper than a thread's stack. Expressions inside type names (the size of an
    /// array type in a cast) are not part of it.
    pub fn height(&self) -> usize {
        let mut height = 0;
        let mut pending = vec![(self, 1)];
        while let Some((e, level)) = pending.pop() {
            height = height.max(level);
            e.for_each_child(|child| pending.push((child, level + 1)));
        }
        height
    }

    /// Whether this is `entry->NAME`: a member of the state saved at the function's entry.
    pub fn is_entry_member(&self) -> bool {
        matches!(&self.kind, ExprKind::Member { base, arrow: true, .. }
            if matches!(&base.kind, ExprKind::Ident(n) if n == ENTRY))
    }

    /// The first call of something that is not a name (`1()`) in this expression, in
    /// evaluation order: DTrace refuses it (D_FUNC_IDENT) before looking at the rest.
    pub fn call_of_non_name(&self) -> Option<&Expr> {
        if matches!(self.kind, ExprKind::CallOf { .. }) {
            return Some(self);
        }
        let mut found = None;
        self.for_each_child(|child| {
            if found.is_none() {
                found = child.call_of_non_name();
            }
        });
        found
    }

    /// Call `f` on each operand of this expression.
    /// The spans of the nodes DTrace's parser makes only once it has read the token after
    /// this expression: the expression itself, then down its right edge while a node ends
    /// with an operand (a leaf needs that token too, to know it is complete); a node that
    /// ends with its own closing token (`f(...)`, `a[i]`, `sizeof(t)`, `x++`) is made at
    /// that token, and so is everything inside it. DTrace reports a node's errors at the
    /// line where it was made.
    pub fn made_after(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        let mut node = self;
        loop {
            let mut last = None;
            let mut children = 0;
            node.for_each_child(|c| {
                children += 1;
                if c.span.end == node.span.end {
                    last = Some(c);
                }
            });
            // A leaf is a token; the other childless nodes end with their own `)`.
            let closed = matches!(
                node.kind,
                ExprKind::SizeofType(_) | ExprKind::Offsetof { .. } | ExprKind::Call { .. }
            );
            if last.is_some() || (children == 0 && !closed) {
                spans.push(node.span);
            }
            match last {
                Some(child) => node = child,
                None => return spans,
            }
        }
    }

    fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Int { .. }
            | ExprKind::Char(_)
            | ExprKind::Str(_)
            | ExprKind::Ident(_)
            | ExprKind::Macro(_)
            | ExprKind::SelfVar(_)
            | ExprKind::ThisVar(_)
            | ExprKind::Aggregation(_)
            | ExprKind::Symbol { .. }
            | ExprKind::SizeofType(_)
            | ExprKind::Offsetof { .. } => {}
            ExprKind::Unary { operand, .. }
            | ExprKind::Cast { operand, .. }
            | ExprKind::Xlate { operand, .. }
            | ExprKind::SizeofExpr(operand)
            | ExprKind::Stringof(operand)
            | ExprKind::Member { base: operand, .. } => f(operand),
            ExprKind::Binary { lhs, rhs, .. }
            | ExprKind::Assign { lhs, rhs, .. }
            | ExprKind::Comma(lhs, rhs) => {
                f(lhs);
                f(rhs);
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => {
                f(cond);
                f(then);
                f(otherwise);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(f),
            ExprKind::Index { base, args } | ExprKind::CallOf { callee: base, args } => {
                f(base);
                args.iter().for_each(f);
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer constant with its C suffix and base (the base decides whether an unsuffixed
    /// constant may take an unsigned type, as in C).
    Int {
        value: u64,
        unsigned: bool,
        /// Number of `l`/`L` in the suffix (0, 1 or 2).
        longs: u8,
        decimal: bool,
    },
    /// A character constant (`'a'`, `'\n'`, `'\0'`), of type `char`.
    Char(u8),
    /// A string literal with escapes resolved.
    Str(Vec<u8>),
    /// A plain identifier: variable, built-in variable, enum constant, function name.
    Ident(String),
    /// `$1`.. `$9` (`Arg(1)`), `$$1` (`StrArg(1)`), and named macros (`$target`, `$pid`, `$ppid`, `$uid`, ...).
    Macro(MacroVar),
    /// `self->name`
    SelfVar(String),
    /// `this->name`
    ThisVar(String),
    /// `@name`, or `@` alone (empty name).
    Aggregation(String),
    /// `` `name `` or `module`name`: a kernel symbol (`module` is all before the last
    /// mark: `` ` `` for a user symbol `` ``name ``); `name` may be empty.
    Symbol {
        module: Option<String>,
        name: String,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `lhs = rhs` (`op` = None) or `lhs op= rhs`.
    Assign {
        op: Option<BinaryOp>,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `a, b`
    Comma(Box<Expr>, Box<Expr>),
    /// A call of an action, subroutine or aggregating function: `printf(...)`, `count()`.
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
    },
    /// A call of an expression that is not a name (`(a)(b)`): the typing pass refuses it,
    /// in program order with its other errors, as DTrace does.
    CallOf {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `base[i, j]`: associative array, aggregation key tuple, array or pointer index.
    Index {
        base: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `base.name` (`arrow` = false) or `base->name` (`arrow` = true).
    Member {
        base: Box<Expr>,
        name: String,
        arrow: bool,
    },
    Cast {
        ty: TypeName,
        operand: Box<Expr>,
    },
    SizeofType(TypeName),
    SizeofExpr(Box<Expr>),
    Offsetof {
        ty: TypeName,
        member: String,
    },
    /// `stringof expr` or `stringof(expr)`
    Stringof(Box<Expr>),
    /// `xlate <type> (expr)`
    Xlate {
        ty: TypeName,
        operand: Box<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MacroVar {
    /// `$1`..: the Nth argument after the script, as an integer/identifier (`$0` is the script name).
    Arg(u32),
    /// `$$1`..: the Nth argument as a string.
    StrArg(u32),
    /// `$target`, `$pid`, `$ppid`, `$pgid`, `$sid`, `$uid`, `$gid`, `$euid`, `$egid`, `$projid`, `$taskid`.
    Named(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    Deref,
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LogAnd,
    LogXor,
    LogOr,
}

/// A type as written in a cast, `sizeof`, declaration or translator: specifiers plus an
/// abstract declarator.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeName {
    pub spec: TypeSpec,
    /// Applied inside-out like C: `char *[4]` is `[Pointer, Array(4)]` read as "array of 4 pointers to char".
    pub declarator: Vec<DeclaratorPart>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeSpec {
    /// Built-in C/D type words in canonical order, e.g. `unsigned long long`, `char`, `void`,
    /// `string`, `float`; with qualifiers (`const`, `volatile`) dropped into `qualifiers`.
    /// The order is `[unsigned | signed] [short | long | long long] [base]`: `signed` is kept
    /// only for `signed char`, the base `int` is dropped after `short`/`long`
    /// (`long unsigned int` is `unsigned long`) and implied otherwise (`unsigned` is
    /// `unsigned int`, `signed` and `const` alone are `int`).
    Builtin {
        words: Vec<String>,
        qualifiers: Vec<String>,
    },
    /// A typedef name (`uint64_t`, `pid_t`, a user typedef), possibly with a module scope
    /// (`vmlinux`pid_t`).
    Named {
        name: String,
        qualifiers: Vec<String>,
    },
    Struct {
        union: bool,
        name: Option<String>,
        /// `Some` when the body `{ ... }` is given.
        members: Option<Vec<Decl>>,
        qualifiers: Vec<String>,
    },
    Enum {
        name: Option<String>,
        /// Each enumerator, its value, and its span through the token after it.
        variants: Option<Vec<(String, Option<Expr>, Span)>>,
        qualifiers: Vec<String>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclaratorPart {
    Pointer {
        qualifiers: Vec<String>,
    },
    /// `[N]` or `[]`.
    Array(Option<Box<Expr>>),
    /// An associative-array declarator: `[string, int]`.
    AssocArray(Vec<TypeName>),
    /// A function declarator: `(int, char *)`.
    Function(Vec<TypeName>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageClass {
    Self_,
    This,
    Extern,
    Static,
    Register,
    Typedef,
}

/// A declaration: `int x;`, `self int y, z;`, `int a[string];`, `typedef int foo_t;`,
/// `struct s { int a; };`, bitfields in struct members (`int a : 3;`).
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub class: Option<StorageClass>,
    pub spec: TypeSpec,
    pub declarators: Vec<Declarator>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    /// Empty for an unnamed bit-field (`int : 0;`).
    pub name: String,
    pub parts: Vec<DeclaratorPart>,
    pub bitfield: Option<Expr>,
    pub span: Span,
}

/// `inline type name = expr;`
#[derive(Clone, Debug, PartialEq)]
pub struct Inline {
    /// Its type; an inline with parameters ends in an associative-array declarator of
    /// their types (`inline int f[int x, int y] = x + y;`).
    pub ty: TypeName,
    pub name: String,
    /// The parameters' names, for an inline used as an array (`f[1, 2]`).
    pub params: Vec<String>,
    pub value: Expr,
    pub span: Span,
}

/// `translator out_type < in_type name > { member = expr; ... };`
#[derive(Clone, Debug, PartialEq)]
pub struct Translator {
    pub output: TypeName,
    pub input: TypeName,
    pub input_name: String,
    pub members: Vec<(String, Expr, Span)>,
    pub span: Span,
}

/// `provider name { probe p(native args) [: (translated args)]; ... };`: the probes a
/// program built the DTrace way (`dtrace -h`, `dtrace -G`) declares.
#[derive(Clone, Debug, PartialEq)]
pub struct Provider {
    pub name: String,
    pub probes: Vec<ProviderProbe>,
    pub span: Span,
}

/// `probe name(int a, char *b) : (char *b, int a);`
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderProbe {
    /// As written (`__` is `-` in D).
    pub name: String,
    /// The native arguments: what the program passes.
    pub native: Vec<ProbeParam>,
    /// The translated arguments (`args[]`), when a `: (...)` list is given.
    pub translated: Option<Vec<ProbeParam>>,
    pub span: Span,
}

/// One argument of a provider's probe: its type and optional name.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeParam {
    pub ty: TypeName,
    pub name: Option<String>,
    pub span: Span,
}

impl TypeName {
    /// The type as C spells it (`unsigned long`, `struct in *`, `char *const *`, `int [4]`).
    pub fn c_text(&self) -> String {
        let (qualifiers, mut base) = match &self.spec {
            TypeSpec::Builtin { words, qualifiers } => (qualifiers, words.join(" ")),
            TypeSpec::Named { name, qualifiers } => (qualifiers, name.replace('`', "")),
            TypeSpec::Struct {
                union,
                name,
                qualifiers,
                ..
            } => (
                qualifiers,
                format!(
                    "{} {}",
                    if *union { "union" } else { "struct" },
                    name.as_deref().unwrap_or("")
                ),
            ),
            TypeSpec::Enum {
                name, qualifiers, ..
            } => (
                qualifiers,
                format!("enum {}", name.as_deref().unwrap_or("")),
            ),
        };
        if !qualifiers.is_empty() {
            base = format!("{} {base}", qualifiers.join(" "));
        }
        // Declarator parts apply inside-out: pointers bind tighter than what follows them.
        let mut decl = String::new();
        for part in self.declarator.iter().rev() {
            match part {
                DeclaratorPart::Pointer { qualifiers } => {
                    decl = format!(
                        "*{}{decl}",
                        qualifiers
                            .iter()
                            .map(|q| format!("{q} "))
                            .collect::<String>()
                    );
                }
                DeclaratorPart::Array(size) => {
                    let n = match size.as_deref().map(|e| &e.kind) {
                        Some(ExprKind::Int { value, .. }) => value.to_string(),
                        _ => String::new(),
                    };
                    if decl.starts_with('*') {
                        decl = format!("({decl})");
                    }
                    decl = format!("{decl}[{n}]");
                }
                DeclaratorPart::AssocArray(_) | DeclaratorPart::Function(_) => {
                    if decl.starts_with('*') {
                        decl = format!("({decl})");
                    }
                    decl.push_str("()");
                }
            }
        }
        let text = if decl.is_empty() {
            base
        } else {
            format!("{base} {}", decl.trim_end())
        };
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

#[cfg(test)]
mod tests {
    use crate::span::{Origin, Source};

    use super::Item;

    #[test]
    fn the_args_a_clause_reads_are_found_at_any_depth() {
        let source = Source::new(
            Origin::Script("t.d".into()),
            "fbt::vfs_*:entry /args[1] > 0/ { if (1) { x = args[0]->f_flags + args[1]; } y = args[i]; }"
                .into(),
        );
        let program = crate::parse(&source, 0, &|_| false).expect("parses");
        let Some(Item::Clause(c)) = program.items.first() else {
            panic!("a clause")
        };
        let mut read = c.args_read();
        read.sort();
        assert_eq!(read, [None, Some(0), Some(1)]);
    }
}
