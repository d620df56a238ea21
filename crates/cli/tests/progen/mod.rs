//! A generator of random, well-typed D programs: several clauses (on `BEGIN` and on probes
//! that compile but seldom fire), predicates, `if`/`else`, global, thread-local,
//! clause-local and associative variables of integer and string type, integer and string
//! expressions over D's operators, built-in variables and string subroutines, `printf` with
//! formats matching its arguments, `trace`, and every aggregating function with tuple keys.
//!
//! Each variable and aggregation keeps the type (or the function and key signature) it was
//! first given, as D requires, so a generated program is meant to compile. What it must do
//! is either run or be refused with a D error: a verifier rejection, a panic or a hang is
//! a bug (`generated_programs.rs`).

use crate::common::rng::Rng;
use std::collections::HashMap;

/// The type of a generated expression.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Int,
    Str,
}

/// An aggregation's function and key types, fixed by its first use.
#[derive(Clone)]
struct Agg {
    func: AggFunc,
    keys: Vec<Ty>,
}

#[derive(Clone, Copy)]
enum AggFunc {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    Stddev,
    Quantize,
    Lquantize,
    Llquantize,
}

const AGG_FUNCS: &[AggFunc] = &[
    AggFunc::Count,
    AggFunc::Sum,
    AggFunc::Avg,
    AggFunc::Min,
    AggFunc::Max,
    AggFunc::Stddev,
    AggFunc::Quantize,
    AggFunc::Lquantize,
    AggFunc::Llquantize,
];

/// Probes a clause may be enabled on besides `BEGIN`: they load like any probe and fire
/// seldom or never while the program runs.
const OTHER_PROBES: &[&str] = &[
    "syscall::getpgid:entry",
    "syscall::getpgid:return",
    "proc:::exec-success",
    "profile-1s",
];

const STRING_LITERALS: &[&str] = &["", "a", "hello", "/usr/lib/x.so", "a,b,,c", "DTrace"];
const INT_BUILTINS: &[&str] = &[
    "pid",
    "tid",
    "ppid",
    "uid",
    "cpu",
    "timestamp",
    "id",
    "epid",
];
const STR_BUILTINS: &[&str] = &["execname", "probefunc", "probename", "probeprov"];
const INT_BINOPS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&&",
    "||",
];
const INT_FORMATS: &[&str] = &["%d ", "%u ", "%x ", "%5d ", "%-8d ", "%lld ", "%i "];
const STR_FORMATS: &[&str] = &["%s ", "%-12s ", "%20s ", "%.3s "];
const STR_CMPOPS: &[&str] = &["==", "!=", "<", "<=", ">", ">="];
const CASTS: &[&str] = &[
    "char",
    "unsigned char",
    "short",
    "int",
    "unsigned int",
    "long",
    "uint64_t",
    "int32_t",
];

/// Generates one program per call of [`ProgramGen::program`].
pub struct ProgramGen {
    rng: Rng,
    /// Variable name -> type, for this program.
    vars: HashMap<String, Ty>,
    aggs: HashMap<String, Agg>,
    /// Associative arrays: name -> (key types, value type).
    assocs: HashMap<String, (Vec<Ty>, Ty)>,
    /// Expression nesting left before only leaves are generated.
    depth: u32,
}

impl ProgramGen {
    pub fn new(seed: u64) -> ProgramGen {
        ProgramGen {
            rng: Rng::new(seed),
            vars: HashMap::new(),
            aggs: HashMap::new(),
            assocs: HashMap::new(),
            depth: 0,
        }
    }

    /// A whole program: a few clauses, then a `BEGIN` clause that exits.
    pub fn program(&mut self) -> String {
        self.vars.clear();
        self.aggs.clear();
        self.assocs.clear();
        let mut out = String::new();
        for _ in 0..1 + self.rng.below(4) {
            let probe = if self.rng.chance(60) {
                "BEGIN"
            } else {
                self.rng.pick(OTHER_PROBES)
            };
            out.push_str(probe);
            out.push('\n');
            if self.rng.chance(30) {
                let pred = self.int_expr(2);
                out.push_str(&format!("/{pred}/\n"));
            }
            out.push_str("{\n");
            let statements = 1 + self.rng.below(6);
            self.block(&mut out, statements, 1);
            out.push_str("}\n\n");
        }
        out.push_str("BEGIN\n{\n\texit(0);\n}\n");
        out
    }

    fn block(&mut self, out: &mut String, statements: u64, indent: usize) {
        for _ in 0..statements {
            self.statement(out, indent);
        }
    }

    fn statement(&mut self, out: &mut String, indent: usize) {
        let tabs = "\t".repeat(indent);
        let line = match self.rng.below(100) {
            0..=29 => self.assignment(),
            30..=44 => self.printf(),
            45..=49 => format!("trace({});", self.any_expr(2)),
            50..=74 => self.aggregation(),
            75..=84 if indent < 3 => {
                let cond = self.int_expr(2);
                out.push_str(&format!("{tabs}if ({cond}) {{\n"));
                let n = 1 + self.rng.below(3);
                self.block(out, n, indent + 1);
                if self.rng.chance(50) {
                    out.push_str(&format!("{tabs}}} else {{\n"));
                    let n = 1 + self.rng.below(3);
                    self.block(out, n, indent + 1);
                }
                out.push_str(&format!("{tabs}}}\n"));
                return;
            }
            _ => self.assignment(),
        };
        out.push_str(&format!("{tabs}{line}\n"));
    }

    /// `x = e;` for a global, `self->`, `this->` or associative variable, of the type it
    /// already has (or a new one).
    fn assignment(&mut self) -> String {
        let ty = if self.rng.chance(60) {
            Ty::Int
        } else {
            Ty::Str
        };
        if self.rng.chance(25) {
            let value = self.expr(ty, 3);
            let (name, keys) = self.assoc(ty);
            return format!("{name}[{keys}] = {value};");
        }
        let value = self.expr(ty, 3);
        if ty == Ty::Int && self.rng.chance(15) {
            if let Some(name) = self.known(Ty::Int) {
                let op = self.rng.pick(&["+=", "-=", "*=", "|=", "^="]);
                return format!("{name} {op} {value};");
            }
        }
        let name = self.variable(ty);
        format!("{name} = {value};")
    }

    /// A variable name of type `ty`, new or already used with that type.
    fn variable(&mut self, ty: Ty) -> String {
        let scope = *self.rng.pick(&["g", "self->", "this->"]);
        let tag = if ty == Ty::Int { "i" } else { "s" };
        let name = format!("{scope}{tag}{}", self.rng.below(3));
        self.vars.insert(name.clone(), ty);
        name
    }

    /// An associative array holding `ty`, and a key expression list matching its keys.
    fn assoc(&mut self, ty: Ty) -> (String, String) {
        let tag = if ty == Ty::Int { "ai" } else { "as" };
        let name = format!("{tag}{}", self.rng.below(2));
        let types = match self.assocs.get(&name) {
            Some((keys, _)) => keys.clone(),
            None => self.key_types(),
        };
        // The keys first: they may not read the array before its first assignment.
        let keys = self.key_exprs(&types);
        self.assocs.insert(name.clone(), (types, ty));
        (name, keys)
    }

    /// An element of an associative array of `ty` already assigned, if there is one.
    fn assigned_assoc(&mut self, ty: Ty) -> Option<String> {
        let mut names: Vec<(String, Vec<Ty>)> = self
            .assocs
            .iter()
            .filter(|(_, (_, t))| *t == ty)
            .map(|(n, (k, _))| (n.clone(), k.clone()))
            .collect();
        if names.is_empty() {
            return None;
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let (name, keys) = self.rng.pick(&names).clone();
        let keys = self.key_exprs(&keys);
        Some(format!("{name}[{keys}]"))
    }

    fn key_types(&mut self) -> Vec<Ty> {
        (0..1 + self.rng.below(3))
            .map(|_| {
                if self.rng.chance(60) {
                    Ty::Int
                } else {
                    Ty::Str
                }
            })
            .collect()
    }

    fn key_exprs(&mut self, keys: &[Ty]) -> String {
        keys.iter()
            .map(|&t| self.expr(t, 1))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn printf(&mut self) -> String {
        let mut fmt = String::new();
        let mut args = Vec::new();
        for _ in 0..self.rng.below(4) {
            if self.rng.chance(60) {
                let f = *self.rng.pick::<&str>(INT_FORMATS);
                fmt.push_str(f);
                args.push(self.int_expr(2));
            } else {
                let f = *self.rng.pick::<&str>(STR_FORMATS);
                fmt.push_str(f);
                args.push(self.str_expr(2));
            }
        }
        fmt.push_str("\\n");
        let mut s = format!("printf(\"{fmt}\"");
        for a in args {
            s.push_str(", ");
            s.push_str(&a);
        }
        s.push_str(");");
        s
    }

    fn aggregation(&mut self) -> String {
        let name = format!("@a{}", self.rng.below(4));
        let agg = match self.aggs.get(&name) {
            Some(a) => a.clone(),
            None => {
                let keys = if self.rng.chance(20) {
                    Vec::new()
                } else {
                    self.key_types()
                };
                let a = Agg {
                    func: *self.rng.pick(AGG_FUNCS),
                    keys,
                };
                self.aggs.insert(name.clone(), a.clone());
                a
            }
        };
        let keys = if agg.keys.is_empty() {
            String::new()
        } else {
            format!("[{}]", self.key_exprs(&agg.keys))
        };
        let v = self.int_expr(2);
        let call = match agg.func {
            AggFunc::Count => "count()".to_string(),
            AggFunc::Sum => format!("sum({v})"),
            AggFunc::Avg => format!("avg({v})"),
            AggFunc::Min => format!("min({v})"),
            AggFunc::Max => format!("max({v})"),
            AggFunc::Stddev => format!("stddev({v})"),
            AggFunc::Quantize => format!("quantize({v})"),
            AggFunc::Lquantize => format!("lquantize({v}, 0, 100, 10)"),
            AggFunc::Llquantize => format!("llquantize({v}, 10, 0, 6, 20)"),
        };
        format!("{name}{keys} = {call};")
    }

    fn any_expr(&mut self, depth: u32) -> String {
        if self.rng.chance(60) {
            self.int_expr(depth)
        } else {
            self.str_expr(depth)
        }
    }

    fn expr(&mut self, ty: Ty, depth: u32) -> String {
        match ty {
            Ty::Int => self.int_expr(depth),
            Ty::Str => self.str_expr(depth),
        }
    }

    /// A variable already given type `ty`, if there is one.
    fn known(&mut self, ty: Ty) -> Option<String> {
        let mut names: Vec<&String> = self
            .vars
            .iter()
            .filter(|(_, t)| **t == ty)
            .map(|(n, _)| n)
            .collect();
        names.sort();
        if names.is_empty() {
            return None;
        }
        Some((*self.rng.pick(&names)).clone())
    }

    fn int_expr(&mut self, depth: u32) -> String {
        let saved = self.depth;
        self.depth = depth;
        let e = self.int_node();
        self.depth = saved;
        e
    }

    fn int_node(&mut self) -> String {
        if self.depth == 0 || self.rng.chance(30) {
            return self.int_leaf();
        }
        self.depth -= 1;
        let e = match self.rng.below(100) {
            0..=49 => {
                let op = *self.rng.pick(INT_BINOPS);
                let l = self.int_node();
                let r = self.int_node();
                format!("({l} {op} {r})")
            }
            50..=57 => {
                let op = *self.rng.pick(&["-", "~", "!", "+"]);
                format!("{op}({})", self.int_node())
            }
            58..=65 => format!("({})({})", self.rng.pick(CASTS), self.int_node()),
            66..=73 => {
                let c = self.int_node();
                let a = self.int_node();
                let b = self.int_node();
                format!("({c} ? {a} : {b})")
            }
            74..=81 => format!("strlen({})", self.str_node()),
            82..=89 => {
                let op = *self.rng.pick(STR_CMPOPS);
                let l = self.str_node();
                let r = self.str_node();
                format!("({l} {op} {r})")
            }
            90..=94 => {
                let f = *self.rng.pick(&["index", "rindex"]);
                let l = self.str_node();
                let r = self.str_node();
                format!("{f}({l}, {r})")
            }
            _ => self
                .assigned_assoc(Ty::Int)
                .unwrap_or_else(|| self.int_leaf()),
        };
        self.depth += 1;
        e
    }

    fn int_leaf(&mut self) -> String {
        match self.rng.below(100) {
            0..=39 => self
                .rng
                .pick(&[
                    "0",
                    "1",
                    "2",
                    "7",
                    "-1",
                    "255",
                    "0x7fffffff",
                    "1000000007",
                    "0xffffffffffffffff",
                    "'a'",
                    "010",
                ])
                .to_string(),
            40..=64 => self.rng.pick(INT_BUILTINS).to_string(),
            _ => self.known(Ty::Int).unwrap_or_else(|| "42".to_string()),
        }
    }

    fn str_expr(&mut self, depth: u32) -> String {
        let saved = self.depth;
        self.depth = depth;
        let e = self.str_node();
        self.depth = saved;
        e
    }

    fn str_node(&mut self) -> String {
        if self.depth == 0 || self.rng.chance(35) {
            return self.str_leaf();
        }
        self.depth -= 1;
        let e = match self.rng.below(100) {
            0..=24 => {
                let l = self.str_node();
                let r = self.str_node();
                format!("strjoin({l}, {r})")
            }
            25..=39 => {
                let s = self.str_node();
                let i = self.int_node();
                if self.rng.chance(50) {
                    format!("substr({s}, {i})")
                } else {
                    let n = self.int_node();
                    format!("substr({s}, {i}, {n})")
                }
            }
            40..=49 => format!("lltostr({})", self.int_node()),
            50..=59 => {
                let f = *self
                    .rng
                    .pick(&["toupper", "tolower", "basename", "dirname"]);
                format!("{f}({})", self.str_node())
            }
            60..=69 => {
                let c = self.int_node();
                let a = self.str_node();
                let b = self.str_node();
                format!("({c} ? {a} : {b})")
            }
            70..=79 => {
                let f = *self.rng.pick(&["strstr", "strchr", "strrchr"]);
                let s = self.str_node();
                if f == "strstr" {
                    let t = self.str_node();
                    format!("{f}({s}, {t})")
                } else {
                    format!("{f}({s}, 'a')")
                }
            }
            _ => self
                .assigned_assoc(Ty::Str)
                .unwrap_or_else(|| self.str_leaf()),
        };
        self.depth += 1;
        e
    }

    fn str_leaf(&mut self) -> String {
        match self.rng.below(100) {
            0..=44 => format!("\"{}\"", self.rng.pick(STRING_LITERALS)),
            45..=69 => self.rng.pick(STR_BUILTINS).to_string(),
            _ => self
                .known(Ty::Str)
                .unwrap_or_else(|| "\"none\"".to_string()),
        }
    }
}
