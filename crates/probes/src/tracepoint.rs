//! Kernel tracepoints as tracefs describes them: the list of events (one read of
//! `available_events`) and, only for probes a script or listing actually matches, each event's
//! `format` file parsed into fields (name, C type, offset, size, signedness).

use std::path::PathBuf;

use dtrace_backend::program::{FieldKind, TracepointField, TracepointLayout};
use dtrace_backend::types::{self, Type};
use dtrace_runtime::tracefs;

/// One tracepoint: `category:name` (`sched:sched_switch`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub category: String,
    pub name: String,
}

/// Every tracepoint of the running kernel, sorted by category and name; or why tracefs
/// could not be mounted or read (`/sys/kernel/tracing/available_events: Permission denied`).
pub fn events() -> Result<Vec<Event>, String> {
    let root = tracefs::ensure_mounted().map_err(|e| e.to_string())?;
    let path = root.join("available_events");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {}", path.display(), dtrace_runtime::errno_text(&e)))?;
    let mut events: Vec<Event> = text
        .lines()
        .filter_map(|line| {
            let (category, name) = line.trim().split_once(':')?;
            Some(Event {
                category: category.to_string(),
                name: name.to_string(),
            })
        })
        .collect();
    events.sort_by(|a, b| (&a.category, &a.name).cmp(&(&b.category, &b.name)));
    Ok(events)
}

/// The fields of tracepoint `category:name`, from its format file, common fields included.
pub fn format(category: &str, name: &str) -> Result<Vec<TracepointField>, String> {
    let path: PathBuf = tracefs::ensure_mounted()
        .map_err(|e| e.to_string())?
        .join("events")
        .join(category)
        .join(name)
        .join("format");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(parse_format(&text))
}

/// The `field:` lines of a format file.
pub fn parse_format(text: &str) -> Vec<TracepointField> {
    text.lines().filter_map(parse_field).collect()
}

/// `\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;`
fn parse_field(line: &str) -> Option<TracepointField> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in line.trim().split(';') {
        let Some((key, value)) = part.trim().split_once(':') else {
            continue;
        };
        match key {
            "field" => decl = Some(value.trim()),
            "offset" => offset = value.trim().parse().ok(),
            "size" => size = value.trim().parse().ok(),
            "signed" => signed = value.trim() == "1",
            _ => {}
        }
    }
    let (name, ctype) = split_declaration(decl?)?;
    let (offset, size) = (offset?, size?);
    let kind = classify(&ctype, size, signed);
    Some(TracepointField {
        name,
        ctype,
        offset,
        size,
        signed,
        kind,
    })
}

/// `char comm[16]` -> (`comm`, `char[16]`); `const char * filename` -> (`filename`,
/// `const char *`); `__data_loc char[] name` -> (`name`, `__data_loc char[]`).
fn split_declaration(decl: &str) -> Option<(String, String)> {
    let (decl, suffix) = match decl.strip_suffix(']') {
        Some(rest) => {
            let open = rest.rfind('[')?;
            (&decl[..open], &decl[open..])
        }
        None => (decl, ""),
    };
    let decl = decl.trim_end();
    let start = decl
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &decl[start..];
    if name.is_empty() {
        return None;
    }
    let ctype = format!("{}{suffix}", decl[..start].trim_end());
    Some((name.to_string(), ctype))
}

/// How D reads a field of C type `ctype` stored in `size` bytes.
fn classify(ctype: &str, size: u32, signed: bool) -> FieldKind {
    if let Some(rest) = ctype.strip_prefix("__data_loc") {
        return if rest.trim_start().starts_with("char") {
            FieldKind::DataLocString
        } else {
            FieldKind::Other
        };
    }
    if ctype.ends_with(']') {
        let base = &ctype[..ctype.rfind('[').unwrap_or(0)];
        let words = words(base);
        let chars = words
            .iter()
            .all(|w| matches!(w.as_str(), "char" | "signed"));
        return if chars && !words.is_empty() {
            FieldKind::CharArray
        } else {
            FieldKind::Other
        };
    }
    if ctype.contains('*') {
        return if size == 8 {
            FieldKind::Pointer
        } else {
            FieldKind::Other
        };
    }
    if !matches!(size, 1 | 2 | 4 | 8) || ctype.contains("struct ") || ctype.contains("union ") {
        return FieldKind::Other;
    }
    FieldKind::Int(integer_type(ctype, size, signed))
}

/// The words of a C type without qualifiers.
fn words(ctype: &str) -> Vec<String> {
    ctype
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "__user"))
        .map(str::to_string)
        .collect()
}

/// The D integer type for C type `ctype`: C's own integer types and D's typedefs by name,
/// anything else (`u32`, `gfp_t`, enums) by size and signedness.
fn integer_type(ctype: &str, size: u32, signed: bool) -> Type {
    let words = words(ctype);
    let c_words = [
        "char", "short", "int", "long", "signed", "unsigned", "_Bool", "bool",
    ];
    let named = match words.as_slice() {
        [w] if w == "bool" || w == "_Bool" => None,
        [w] => types::builtin_typedef(w),
        _ => None,
    }
    .or_else(|| {
        (!words.is_empty() && words.iter().all(|w| c_words.contains(&w.as_str())))
            .then(|| types::from_words(&words))
            .flatten()
    });
    if let Some(ty @ Type::Int { .. }) = named {
        return ty;
    }
    types::sized_int(size, signed)
}

/// The layout of an event's arguments: its fields after the common ones, less any listed in
/// `skip` (`__syscall_nr`).
pub fn layout(fields: Vec<TracepointField>, skip: &[&str]) -> TracepointLayout {
    TracepointLayout {
        args: fields
            .into_iter()
            .filter(|f| !f.name.starts_with("common_") && !skip.contains(&f.name.as_str()))
            .collect(),
        ..TracepointLayout::default()
    }
}

/// How `dtrace -lv` shows an argument's type: the D type when there is one.
pub fn arg_type_name(f: &TracepointField) -> String {
    match &f.kind {
        FieldKind::Int(ty) => ty.to_string(),
        FieldKind::Pointer => "uintptr_t".to_string(),
        FieldKind::KernelPointer { pointee } => match dtrace_backend::types::kernel::vmlinux() {
            Some(btf) => format!(
                "{} *",
                dtrace_backend::types::kernel::from_btf(btf, *pointee)
            ),
            None => f.ctype.clone(),
        },
        FieldKind::CharArray | FieldKind::DataLocString => "string".to_string(),
        FieldKind::Other => f.ctype.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPENAT: &str = "name: sys_enter_openat
ID: 782
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;
\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;
\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;
\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;

print fmt: \"dfd: 0x%08lx\", ((unsigned long)(REC->dfd))
";

    #[test]
    fn parses_syscall_formats() {
        let fields = parse_format(OPENAT);
        assert_eq!(fields.len(), 6);
        let l = layout(fields, &["__syscall_nr"]);
        let names: Vec<&str> = l.args.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["dfd", "filename", "mode"]);
        assert_eq!(l.args[0].kind, FieldKind::Int(types::INT));
        assert_eq!((l.args[0].offset, l.args[0].size), (16, 8));
        assert_eq!(l.args[1].kind, FieldKind::Pointer);
        assert_eq!(l.args[1].ctype, "const char *");
        assert_eq!(
            l.args[2].kind,
            FieldKind::Int(types::builtin_typedef("uint64_t").unwrap())
        );
    }

    #[test]
    fn classifies_strings_and_arrays() {
        let f = parse_field("\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;").unwrap();
        assert_eq!((f.name.as_str(), f.ctype.as_str()), ("comm", "char[16]"));
        assert_eq!(f.kind, FieldKind::CharArray);
        let f = parse_field("\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;")
            .unwrap();
        assert_eq!(f.name, "filename");
        assert_eq!(f.kind, FieldKind::DataLocString);
        let f =
            parse_field("\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;").unwrap();
        assert_eq!(f.kind, FieldKind::Other);
        let f = parse_field("\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;").unwrap();
        assert_eq!(
            f.kind,
            FieldKind::Int(types::builtin_typedef("pid_t").unwrap())
        );
        let f = parse_field("\tfield:u8 x;\toffset:12;\tsize:1;\tsigned:0;").unwrap();
        assert_eq!(
            f.kind,
            FieldKind::Int(types::builtin_typedef("uint8_t").unwrap())
        );
        let f =
            parse_field("\tfield:unsigned long long y;\toffset:16;\tsize:8;\tsigned:0;").unwrap();
        assert_eq!(f.kind, FieldKind::Int(types::ULLONG));
        assert!(parse_field("print fmt: \"x\"").is_none());
    }

    #[test]
    fn lists_and_reads_the_running_kernel() {
        let all = events().expect("tracefs");
        assert!(all.len() > 100, "only {} tracepoints", all.len());
        assert!(all
            .iter()
            .any(|e| e.category == "sched" && e.name == "sched_process_exec"));
        let fields = format("sched", "sched_process_exec").unwrap();
        let l = layout(fields, &[]);
        assert_eq!(l.args[0].name, "filename");
        assert_eq!(l.args[0].kind, FieldKind::DataLocString);
        assert!(format("sched", "no_such_event").is_err());
    }
}
