//! D value types, and DTrace's rules for them: the types of operators and the casts that
//! change a value (LP64: long and pointers are 64 bits).
//!
//! Besides D's own types (integers, pointers, `string`), a type can describe kernel memory
//! as the running kernel's BTF does: structs and unions ([`Record`]), arrays, enums (integers
//! named `enum X`), typedefs (integers keep the typedef's name) and functions (opaque, only
//! behind pointers). [`kernel`] converts BTF types into these.
//!
//! A traced program's own types come from its DWARF ([`user`]), converted to BTF and then
//! into these as the kernel's are; their records have ids from [`user::USER_RECORD_BASE`].
//!
//! Structs and unions a D program or library defines (`struct psinfo { ... };`) are
//! [`Record`]s too, with ids from [`D_RECORD_BASE`] up; the code generator keeps their
//! members. [`translators`] carries the translator definitions of one compilation.

mod dwarf;
pub mod kallsyms;
pub mod kernel;
pub mod translators;
pub mod user;

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    /// An integer of `size` bytes (1, 2, 4, 8); `name` is how D spells it (`int`, `uint64_t`).
    Int {
        size: u8,
        signed: bool,
        name: &'static str,
    },
    /// A pointer to a value of the inner type.
    Ptr(Box<Type>),
    /// D's `string`: a NUL-terminated buffer of `strsize` bytes.
    String,
    /// A kernel struct or union (a value of it only exists in kernel memory).
    Struct(Record),
    /// An array of `len` elements (`char comm[16]`).
    Array(Box<Type>, u32),
    /// A type D only passes around behind pointers: a function, a float; its C spelling.
    Opaque(&'static str),
}

/// A struct or union described by kernel BTF, or defined in D.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// Its BTF type id, or [`D_RECORD_BASE`] plus its index among the D definitions.
    pub id: u32,
    /// Its C spelling: `struct task_struct`, `union {...}`, or a typedef's name.
    pub name: &'static str,
    /// Size in bytes.
    pub size: u32,
}

/// Ids of records defined in D start here (BTF ids are far smaller).
pub const D_RECORD_BASE: u32 = 1 << 31;

impl Record {
    /// Whether D (a program or library) defined this struct, rather than kernel BTF or
    /// user DWARF.
    pub fn is_d(&self) -> bool {
        self.id >= D_RECORD_BASE
    }
}

/// The record ABI's description of an integer type named `name`: an enum (`enum tag`)
/// with the constants `constants(tag)` gives, or a plain integer.
pub fn integer_value_type(
    size: u8,
    signed: bool,
    name: &str,
    constants: impl FnOnce(&str) -> Vec<(String, i64)>,
) -> dtrace_abi::datum::ValueType {
    use dtrace_abi::datum::ValueType;
    match name.strip_prefix("enum ") {
        Some(tag) => ValueType::Enum {
            size,
            signed,
            name: name.to_string(),
            constants: constants(tag),
        },
        None => ValueType::Integer {
            size,
            signed,
            name: name.to_string(),
        },
    }
}

pub const INT: Type = Type::Int {
    size: 4,
    signed: true,
    name: "int",
};
pub const UINT: Type = Type::Int {
    size: 4,
    signed: false,
    name: "unsigned int",
};
pub const LONG: Type = Type::Int {
    size: 8,
    signed: true,
    name: "long",
};
pub const ULONG: Type = Type::Int {
    size: 8,
    signed: false,
    name: "unsigned long",
};
pub const LLONG: Type = Type::Int {
    size: 8,
    signed: true,
    name: "long long",
};
pub const ULLONG: Type = Type::Int {
    size: 8,
    signed: false,
    name: "unsigned long long",
};
pub const CHAR: Type = Type::Int {
    size: 1,
    signed: true,
    name: "char",
};
pub const UCHAR: Type = Type::Int {
    size: 1,
    signed: false,
    name: "unsigned char",
};
pub const SHORT: Type = Type::Int {
    size: 2,
    signed: true,
    name: "short",
};
pub const USHORT: Type = Type::Int {
    size: 2,
    signed: false,
    name: "unsigned short",
};
pub const UINT64: Type = Type::Int {
    size: 8,
    signed: false,
    name: "uint64_t",
};
pub const INT64: Type = Type::Int {
    size: 8,
    signed: true,
    name: "int64_t",
};
pub const UINT32: Type = Type::Int {
    size: 4,
    signed: false,
    name: "uint32_t",
};
pub const INT32: Type = Type::Int {
    size: 4,
    signed: true,
    name: "int32_t",
};

/// D's built-in integer typedefs: name, size, signedness.
const BUILTIN_TYPEDEFS: &[(&str, u8, bool)] = &[
    ("int8_t", 1, true),
    ("int16_t", 2, true),
    ("int32_t", 4, true),
    ("int64_t", 8, true),
    ("intptr_t", 8, true),
    ("ssize_t", 8, true),
    ("off_t", 8, true),
    ("time_t", 8, true),
    ("hrtime_t", 8, true),
    ("longlong_t", 8, true),
    ("uint8_t", 1, false),
    ("uchar_t", 1, false),
    ("uint16_t", 2, false),
    ("ushort_t", 2, false),
    ("uint32_t", 4, false),
    ("uint_t", 4, false),
    ("processorid_t", 4, true),
    ("zoneid_t", 4, true),
    ("uint64_t", 8, false),
    ("uintptr_t", 8, false),
    ("size_t", 8, false),
    ("u_longlong_t", 8, false),
    ("ulong_t", 8, false),
    ("caddr_t", 8, false),
    ("pid_t", 4, true),
    ("id_t", 4, true),
    ("projid_t", 4, true),
    ("taskid_t", 4, true),
    ("int_t", 4, true),
    ("uid_t", 4, false),
    ("gid_t", 4, false),
    ("dev_t", 8, false),
    ("major_t", 4, false),
    ("minor_t", 4, false),
    ("mode_t", 4, false),
    ("nlink_t", 4, false),
];

/// The integer type of one of D's built-in typedefs (`uint64_t`, `pid_t`, ...).
pub fn builtin_typedef(name: &str) -> Option<Type> {
    BUILTIN_TYPEDEFS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(name, size, signed)| Type::Int { size, signed, name })
}

/// The size of a floating-point type (D only knows their sizes), by its C name.
pub fn float_size(name: &str) -> Option<u64> {
    match name {
        "float" => Some(4),
        "double" => Some(8),
        "long double" => Some(16),
        _ => None,
    }
}

/// D's fixed-width integer typedef of `size` bytes (`int32_t`, `uint8_t`; 8 bytes for any
/// other size).
pub fn sized_int(size: u32, signed: bool) -> Type {
    let name = match (size, signed) {
        (1, true) => "int8_t",
        (1, false) => "uint8_t",
        (2, true) => "int16_t",
        (2, false) => "uint16_t",
        (4, true) => "int32_t",
        (4, false) => "uint32_t",
        (_, true) => "int64_t",
        (_, false) => "uint64_t",
    };
    builtin_typedef(name).expect("D's fixed-width integer typedefs")
}

/// The type named by C built-in type words (`unsigned long long`, `char`, `short int`).
pub fn from_words(words: &[String]) -> Option<Type> {
    let has = |w: &str| words.iter().any(|x| x == w);
    let longs = words.iter().filter(|w| *w == "long").count();
    let unsigned = has("unsigned");
    if has("void") {
        return Some(Type::Void);
    }
    if has("string") {
        return Some(Type::String);
    }
    if has("float") {
        return Some(Type::Opaque("float"));
    }
    if has("double") {
        return Some(Type::Opaque(if longs > 0 {
            "long double"
        } else {
            "double"
        }));
    }
    let base = if has("char") {
        if unsigned {
            UCHAR
        } else {
            CHAR
        }
    } else if has("short") {
        if unsigned {
            USHORT
        } else {
            SHORT
        }
    } else if longs >= 2 {
        if unsigned {
            ULLONG
        } else {
            LLONG
        }
    } else if longs == 1 {
        if unsigned {
            ULONG
        } else {
            LONG
        }
    } else if unsigned {
        UINT
    } else {
        INT
    };
    Some(if has("signed") && has("char") {
        Type::Int {
            size: 1,
            signed: true,
            name: "signed char",
        }
    } else {
        base
    })
}

impl Type {
    pub fn is_integer(&self) -> bool {
        matches!(self, Type::Int { .. })
    }
    /// Integers and pointers: everything held in one register.
    pub fn is_scalar(&self) -> bool {
        matches!(self, Type::Int { .. } | Type::Ptr(_))
    }
    pub fn is_string(&self) -> bool {
        matches!(self, Type::String)
    }
    /// Whether this is a `float` or `double`, whose values D holds as their bits (not
    /// `long double`).
    pub fn is_float(&self) -> bool {
        matches!(self, Type::Opaque(name) if matches!(float_size(name), Some(4 | 8)))
    }
    pub fn is_signed(&self) -> bool {
        matches!(self, Type::Int { signed: true, .. })
    }
    /// Whether this is a character type (an array of it reads as a string).
    pub fn is_char(&self) -> bool {
        matches!(self, Type::Int { size: 1, name, .. } if name.ends_with("char"))
    }
    /// Size in bytes of a value in memory (`sizeof`); strings report 0 (their size is
    /// `strsize`), and so do `void` and opaque types.
    pub fn size(&self) -> u64 {
        match self {
            Type::Struct(r) => r.size as u64,
            Type::Array(elem, len) => elem.size() * *len as u64,
            Type::Opaque(name) => float_size(name).unwrap_or(0),
            other => other.scalar_size() as u64,
        }
    }
    /// Alignment in memory, as C lays out structs (LP64); kernel records are taken as
    /// 8-aligned.
    pub fn align(&self) -> u32 {
        match self {
            Type::Int { size, .. } => *size as u32,
            Type::Array(elem, _) => elem.align(),
            Type::Opaque(name) => float_size(name).unwrap_or(1).min(8) as u32,
            Type::Struct(r) if r.size < 8 => r.size.next_power_of_two().max(1),
            _ => 8,
        }
    }

    /// Size in bytes of a scalar (pointers are 8); strings report 0 (their size is `strsize`).
    pub fn scalar_size(&self) -> usize {
        match self {
            Type::Int { size, .. } => *size as usize,
            Type::Ptr(_) => 8,
            _ => 0,
        }
    }

    /// The type of a binary operator's result on integers `a` and `b`, by DTrace's rule
    /// (`dt_type_promote`): the operand of higher rank, a rank being the width in bits plus
    /// one for unsigned types. Unlike C there is no promotion to `int` first: `char + char`
    /// is a `char` (its value in a register is the 64-bit sum until something narrows it).
    /// An enum counts as an `int`.
    pub fn common(a: &Type, b: &Type) -> Type {
        let enum_as_int = |t: &Type| match t {
            Type::Int { name, .. } if name.starts_with("enum ") => INT,
            other => other.clone(),
        };
        let (a, b) = (&enum_as_int(a), &enum_as_int(b));
        match (a, b) {
            (Type::Ptr(_), _) => a.clone(),
            (_, Type::Ptr(_)) => b.clone(),
            (
                Type::Int {
                    size: sa,
                    signed: ga,
                    ..
                },
                Type::Int {
                    size: sb,
                    signed: gb,
                    ..
                },
            ) => {
                let rank = |size: &u8, signed: &bool| u32::from(*size) * 8 + u32::from(!signed);
                if rank(sb, gb) > rank(sa, ga) {
                    b.clone()
                } else {
                    a.clone()
                }
            }
            _ => a.clone(),
        }
    }

    /// Whether converting a value of this type to `to` changes it, by DTrace's rule for
    /// casts (`dt_cg_typecast`): only a conversion to a narrower type, to a type of the
    /// same width and the other signedness, or from a signed to a wider unsigned type
    /// below 64 bits truncates and extends the value; to a 64-bit type nothing does.
    /// Pointers are 64-bit unsigned.
    pub fn cast_changes(&self, to: &Type) -> bool {
        let from = match self {
            Type::Int { size, signed, .. } => (*size, *signed),
            Type::Ptr(_) => (8, false),
            _ => return false,
        };
        let Type::Int { size, signed, .. } = to else {
            return false;
        };
        let into = (*size, *signed);
        let ((fs, fg), (ts, tg)) = (from, into);
        if ts >= 8 {
            false
        } else if ts > fs {
            fg && !tg
        } else if ts == fs {
            fg != tg
        } else {
            true
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Void => write!(f, "void"),
            Type::Int { name, .. } => write!(f, "{name}"),
            Type::Ptr(inner) => match &**inner {
                Type::Array(elem, len) => write!(f, "{elem} (*)[{len}]"),
                Type::Opaque(name) if name.contains("(*)") => write!(f, "{name}"),
                _ => write!(f, "{inner} *"),
            },
            Type::String => write!(f, "string"),
            Type::Struct(r) => write!(f, "{}", r.name),
            Type::Array(elem, len) => write!(f, "{elem} [{len}]"),
            Type::Opaque(name) => write!(f, "{name}"),
        }
    }
}

/// Truncate `value` to `ty`'s width and sign- or zero-extend it back to 64 bits.
pub fn normalize(value: u64, ty: &Type) -> u64 {
    match ty {
        Type::Int { size, signed, .. } if *size < 8 => {
            let bits = *size as u32 * 8;
            let mask = (1u64 << bits) - 1;
            let v = value & mask;
            if *signed && v >> (bits - 1) & 1 == 1 {
                v | !mask
            } else {
                v
            }
        }
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_operator_types_by_rank() {
        assert_eq!(Type::common(&CHAR, &SHORT), SHORT);
        assert_eq!(Type::common(&INT, &UINT), UINT);
        assert_eq!(Type::common(&UINT, &LONG), LONG);
        assert_eq!(Type::common(&LONG, &ULONG), ULONG);
        assert_eq!(Type::common(&UCHAR, &UCHAR), UCHAR);
        assert_eq!(Type::common(&CHAR, &UCHAR), UCHAR);
        let e = Type::Int {
            size: 4,
            signed: true,
            name: "enum e",
        };
        assert_eq!(Type::common(&e, &CHAR), INT);
    }

    #[test]
    fn casts_change_values_as_dtrace_casts_them() {
        assert!(INT.cast_changes(&CHAR));
        assert!(INT.cast_changes(&UINT));
        assert!(SHORT.cast_changes(&UINT));
        assert!(!UCHAR.cast_changes(&INT));
        assert!(!CHAR.cast_changes(&SHORT));
        assert!(!INT.cast_changes(&INT));
        assert!(!INT.cast_changes(&ULONG));
        assert!(!ULONG.cast_changes(&LONG));
    }

    #[test]
    fn normalizes_to_width() {
        assert_eq!(normalize(0x1_0000_00ff, &UCHAR), 0xff);
        assert_eq!(normalize(0xff, &CHAR), u64::MAX);
        assert_eq!(normalize(0x8000_0000, &INT) as i64, -2147483648);
        assert_eq!(normalize(0x8000_0000, &UINT), 0x8000_0000);
    }

    #[test]
    fn type_words() {
        let w = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(from_words(&w("unsigned long long")), Some(ULLONG));
        assert_eq!(from_words(&w("short int")), Some(SHORT));
        assert_eq!(from_words(&w("unsigned")), Some(UINT));
        assert_eq!(from_words(&w("string")), Some(Type::String));
    }
}
