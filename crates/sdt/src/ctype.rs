//! The size and signedness of a provider's argument types on x86_64 (LP64), from their C
//! spelling. The header casts each argument to its declared type and then to a 64-bit
//! integer of the same signedness, and the operand specs of rewritten call sites read
//! each argument register at its type's size; both need to know which types are signed.

/// How an argument of a C type travels in a 64-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    /// 1, 2, 4 or 8 bytes.
    pub size: u8,
    pub signed: bool,
}

/// The scalar a C type is passed as. Pointers and arrays are 8 unsigned bytes; integer
/// types and the usual typedefs have their own size and sign; `string` (D's) is a
/// `char *`; anything else (enums, other typedefs) is taken as an 8-byte signed value,
/// which is what C's conversion to `long long` gives an enum or a pointer-sized typedef.
pub fn scalar(ty: &str) -> Scalar {
    let ty = strip_qualifiers(ty);
    let s = |size, signed| Scalar { size, signed };
    if ty.contains('*') || ty.contains('[') || ty == "string" {
        return s(8, false);
    }
    match ty.as_str() {
        "char" | "signed char" | "int8_t" => s(1, true),
        "unsigned char" | "uint8_t" | "uchar_t" | "_Bool" | "bool" => s(1, false),
        "short" | "int16_t" => s(2, true),
        "unsigned short" | "uint16_t" | "ushort_t" => s(2, false),
        "int" | "int32_t" | "pid_t" | "id_t" | "key_t" => s(4, true),
        "unsigned" | "unsigned int" | "uint32_t" | "uint_t" | "uid_t" | "gid_t" | "mode_t"
        | "dev32_t" => s(4, false),
        "unsigned long" | "unsigned long long" | "uint64_t" | "uintptr_t" | "size_t"
        | "ulong_t" | "u_longlong_t" => s(8, false),
        _ => s(8, true),
    }
}

/// The C spelling of a D type in a header: D's `string` is a `char *` in C.
pub fn c_spelling(ty: &str) -> String {
    if strip_qualifiers(ty) == "string" {
        "char *".to_string()
    } else {
        ty.to_string()
    }
}

fn strip_qualifiers(ty: &str) -> String {
    ty.split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_signs() {
        assert_eq!(
            scalar("int"),
            Scalar {
                size: 4,
                signed: true
            }
        );
        assert_eq!(
            scalar("const char *"),
            Scalar {
                size: 8,
                signed: false
            }
        );
        assert_eq!(
            scalar("uint16_t"),
            Scalar {
                size: 2,
                signed: false
            }
        );
        assert_eq!(
            scalar("long"),
            Scalar {
                size: 8,
                signed: true
            }
        );
        assert_eq!(
            scalar("enum e"),
            Scalar {
                size: 8,
                signed: true
            }
        );
        assert_eq!(c_spelling("string"), "char *");
        assert_eq!(c_spelling("struct in *"), "struct in *");
    }
}
