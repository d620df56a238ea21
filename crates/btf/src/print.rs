//! C-like printing of BTF types, for `dtrace -l -v` and error messages:
//! `struct task_struct *`, `const char *`, `int[16]`, `char *const`,
//! `void (*)(int)`, and full declarations such as `char comm[16]` or
//! `long do_sys_openat2(int dfd, const char *filename, ...)`.
//!
//! Declarators are built inside-out as in C: the pointer, array and
//! function layers wrap an inner string, parenthesised when needed.

use crate::query::MAX_DEPTH;
use crate::types::*;
use crate::Btf;

impl Btf {
    /// The C spelling of type `id`, e.g. `struct file *`.
    pub fn type_name(&self, id: TypeId) -> String {
        self.declare(id, String::new(), 0)
    }

    /// A C declaration of `ident` with type `id`, e.g. `char comm[16]`.
    pub fn decl(&self, id: TypeId, ident: &str) -> String {
        self.declare(id, ident.to_string(), 0)
    }

    /// The C declaration of the `FUNC` `id` with parameter names, e.g.
    /// `long do_sys_openat2(int dfd, const char *filename, struct open_how *how)`.
    pub fn func_decl(&self, id: TypeId) -> Option<String> {
        let t = self.get(id)?;
        let TypeKind::Func { proto, .. } = t.kind else {
            return None;
        };
        let p = self.func_proto(proto)?;
        let inner = format!("{}({})", self.str(t.name), self.params(p, true, 0));
        Some(self.declare(p.ret, inner, 0))
    }

    fn declare(&self, id: TypeId, inner: String, depth: usize) -> String {
        let Some(t) = self.get(id).filter(|_| depth <= MAX_DEPTH) else {
            return join("?", &inner);
        };
        let name = self.str(t.name);
        let tagged = |tag: &str| {
            if name.is_empty() {
                format!("{tag} {{...}}")
            } else {
                format!("{tag} {name}")
            }
        };
        match &t.kind {
            TypeKind::Void => join("void", &inner),
            TypeKind::Int(_) | TypeKind::Float { .. } | TypeKind::Typedef(_) => join(name, &inner),
            TypeKind::Struct(_) | TypeKind::Fwd { union: false } => join(&tagged("struct"), &inner),
            TypeKind::Union(_) | TypeKind::Fwd { union: true } => join(&tagged("union"), &inner),
            TypeKind::Enum(_) | TypeKind::Enum64(_) => join(&tagged("enum"), &inner),
            TypeKind::Datasec(_) => join(&format!("SEC(\"{name}\")"), &inner),
            TypeKind::Ptr(target) => self.declare(*target, format!("*{inner}"), depth + 1),
            TypeKind::Const(target) | TypeKind::Volatile(target) | TypeKind::Restrict(target) => {
                let qual = match t.kind.kind() {
                    Kind::Const => "const",
                    Kind::Volatile => "volatile",
                    _ => "restrict",
                };
                if self.kind(*target) == Kind::Ptr {
                    // A qualified pointer: `char *const p`.
                    self.declare(*target, join(qual, &inner), depth + 1)
                } else {
                    format!("{qual} {}", self.declare(*target, inner, depth + 1))
                }
            }
            TypeKind::TypeTag { ty: target, .. } | TypeKind::DeclTag { ty: target, .. } => {
                self.declare(*target, inner, depth + 1)
            }
            TypeKind::Array(a) => {
                let inner = format!("{}[{}]", paren_if_ptr(inner), a.len);
                self.declare(a.elem, inner, depth + 1)
            }
            TypeKind::FuncProto(p) => {
                let inner = format!(
                    "{}({})",
                    paren_if_ptr(inner),
                    self.params(p, false, depth + 1)
                );
                self.declare(p.ret, inner, depth + 1)
            }
            TypeKind::Func { proto, .. } | TypeKind::Var { ty: proto, .. } => {
                self.declare(*proto, join(name, &inner), depth + 1)
            }
        }
    }

    fn params(&self, p: &FuncProto, names: bool, depth: usize) -> String {
        let mut parts: Vec<String> = p
            .fixed_params()
            .iter()
            .map(|param| {
                let ident = if names { self.str(param.name) } else { "" };
                self.declare(param.ty, ident.to_string(), depth)
            })
            .collect();
        if p.is_variadic() {
            parts.push("...".to_string());
        }
        if parts.is_empty() {
            "void".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// `base` followed by a declarator: `int x`, `char *`, `int[4]`.
fn join(base: &str, inner: &str) -> String {
    if inner.is_empty() {
        base.to_string()
    } else if inner.starts_with('[') {
        format!("{base}{inner}")
    } else {
        format!("{base} {inner}")
    }
}

/// Parenthesises a pointer declarator before an array or parameter suffix.
fn paren_if_ptr(inner: String) -> String {
    if inner.starts_with('*') {
        format!("({inner})")
    } else {
        inner
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{fixture, Builder};
    use crate::Btf;

    #[test]
    fn prints_c_types() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        assert_eq!(btf.type_name(0), "void");
        assert_eq!(btf.type_name(f.task_ptr), "struct task_struct *");
        assert_eq!(btf.type_name(f.const_char_ptr), "const char *");
        assert_eq!(btf.type_name(f.comm), "char[16]");
        assert_eq!(btf.decl(f.comm, "comm"), "char comm[16]");
        assert_eq!(btf.decl(f.pid_t, "pid"), "pid_t pid");
        assert_eq!(btf.type_name(f.anon_union), "union {...}");
        assert_eq!(btf.type_name(f.color), "enum color");
        assert_eq!(btf.type_name(f.fn_ptr), "int (*)(int, const char *)");
        assert_eq!(btf.type_name(f.variadic), "void (const char *, ...)");
        assert_eq!(btf.type_name(f.func), "int do_open(int, const char *)");
        assert_eq!(
            btf.func_decl(f.func).as_deref(),
            Some("int do_open(int fd, const char *name)")
        );
        assert_eq!(btf.func_decl(f.int), None);
        assert_eq!(btf.type_name(u32::MAX), "?");
    }

    #[test]
    fn prints_nested_declarators() {
        let mut b = Builder::new();
        let char = b.int("char", 1, true, true);
        let ptr = b.raw("", 2, false, 0, char, &[]);
        let const_ptr = b.raw("", 10, false, 0, ptr, &[]);
        let arr_of_ptr = b.raw("", 3, false, 0, 0, &[ptr, char, 4]);
        let ptr_to_arr = b.raw("", 2, false, 0, arr_of_ptr, &[]);
        let proto = b.raw("", 13, false, 0, ptr, &[]);
        let fp = b.raw("", 2, false, 0, proto, &[]);
        let fp_arr = b.raw("", 3, false, 0, 0, &[fp, char, 2]);
        let btf = Btf::parse(&b.build()).unwrap();
        assert_eq!(btf.type_name(const_ptr), "char *const");
        assert_eq!(btf.decl(const_ptr, "p"), "char *const p");
        assert_eq!(btf.type_name(arr_of_ptr), "char *[4]");
        assert_eq!(btf.type_name(ptr_to_arr), "char *(*)[4]");
        assert_eq!(btf.type_name(fp), "char *(*)(void)");
        assert_eq!(btf.decl(fp_arr, "handlers"), "char *(*handlers[2])(void)");
    }
}
