//! What a recorded datum is, and how it is laid out.
//!
//! A [`ValueType`] describes one datum in a record or an aggregation key completely, so the
//! consumer decodes and formats it from the description alone: D values (integers with their
//! D type name, strings, pointers, enums with their constants, structs and unions with their
//! members, arrays, raw bytes) and data the consumer symbolizes ([`Datum`]: stacks and
//! symbol addresses).
//!
//! Layout: a scalar (integer, pointer, enum) at the top level of a record or key takes a
//! `u64` slot ([`SCALAR_SLOT`]) holding the value converted to 64 bits; inside a struct,
//! union or array it takes its own size. A string takes its `size` bytes (the `strsize`
//! option, rounded up to 8 at the top level), NUL-terminated unless full.

/// Bytes a top-level scalar takes in a record or key.
pub const SCALAR_SLOT: u32 = 8;

/// Default `stack()` depth (DTrace's `stackframes` option).
pub const STACK_FRAMES: u32 = 20;
/// Default `ustack()` depth (DTrace's `ustackframes` option: Oracle's default is 100).
pub const USTACK_FRAMES: u32 = 100;
/// Frames of `jstack()` without an argument (`jstackframes`), as in DTrace.
pub const JSTACK_FRAMES: u32 = 50;
/// Bytes of the user stack, from the stack pointer up, that a record with a `ustack()`
/// copies for the consumer to unwind by call frame information (see [`Datum::UStack`]).
pub const USTACK_WINDOW: u32 = 4096;
/// Bytes of the unwinding registers before the window: `rip`, `rsp`, `rbp` and the number
/// of window bytes copied, each a u64.
pub const USTACK_REGS: u32 = 32;
/// Deepest stack the kernel hands out (`kernel.perf_event_max_stack` defaults to 127);
/// `stackdepth` and `ustackdepth` count at most this many frames.
pub const MAX_STACK_FRAMES: u32 = 127;

/// Recorded data that is not a plain D value but something the consumer symbolizes, in a
/// record or in an aggregation key.
///
/// Layouts: a kernel stack is `frames` u64 program counters (zero after the last frame,
/// as `bpf_get_stack` leaves them); a user stack is the process id (u64) then `frames`
/// user program counters (what the kernel's frame-pointer unwinder finds); a record
/// holding user stacks may also hold, once for all of them, a stack window: the user
/// registers at the probe ([`USTACK_REGS`]: `rip`, `rsp`, `rbp`, the bytes copied) then
/// [`USTACK_WINDOW`] bytes of the user stack from `rsp` up, from which the consumer unwinds
/// by the objects' call frame information; kernel symbols (`func sym mod`) are one u64 address; user
/// symbols (`ufunc usym umod uaddr`) are the process id then the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Datum {
    /// `stack(frames)`
    Stack { frames: u32 },
    /// `ustack(frames)`; `window`: the record offset of the stack window, 0 for none (an
    /// aggregation key holds the frame-pointer stack alone).
    UStack { frames: u32, window: u32 },
    /// `ustackdepth` as `trace()` and `printf()` record it: laid out as `UStack`, the
    /// consumer counting the frames it shows (a `uint32_t`).
    UStackDepth { frames: u32, window: u32 },
    /// `func(pc)` / `sym(pc)`: `module`symbol`.
    Sym,
    /// `mod(pc)`: the kernel module.
    Mod,
    /// `ufunc(pc)` / `usym(pc)`: `object`symbol`.
    USym,
    /// `umod(pc)`: the object's file name.
    UMod,
    /// `uaddr(pc)`: `object`symbol+0xoffset`.
    UAddr,
}

impl Datum {
    /// Bytes the datum takes in a record or key.
    pub fn size(&self) -> u32 {
        match self {
            Datum::Stack { frames } => frames * 8,
            Datum::UStack { frames, .. } | Datum::UStackDepth { frames, .. } => 8 + frames * 8,
            Datum::Sym | Datum::Mod => 8,
            Datum::USym | Datum::UMod | Datum::UAddr => 16,
        }
    }

    /// Whether the datum holds user addresses (and a process id).
    pub fn user(&self) -> bool {
        matches!(
            self,
            Datum::UStack { .. }
                | Datum::UStackDepth { .. }
                | Datum::USym
                | Datum::UMod
                | Datum::UAddr
        )
    }

    /// Offset of the process id of a user datum (none for kernel data).
    pub fn pid_offset(&self) -> Option<usize> {
        self.user().then_some(0)
    }

    /// Offset of the first address (program counter) in the datum.
    pub fn address_offset(&self) -> usize {
        if self.user() {
            8
        } else {
            0
        }
    }

    /// The datum a `func()`-style action function records, by name.
    pub fn symbol_function(name: &str) -> Option<Datum> {
        Some(match name {
            "func" | "sym" => Datum::Sym,
            "mod" => Datum::Mod,
            "ufunc" | "usym" => Datum::USym,
            "umod" => Datum::UMod,
            "uaddr" => Datum::UAddr,
            _ => return None,
        })
    }
}

/// The type of a recorded datum, as much as the consumer needs to decode and print it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// An integer of `size` bytes (1, 2, 4, 8); `name` is its D type (`int`, `uint64_t`).
    Integer {
        size: u8,
        signed: bool,
        name: String,
    },
    /// A pointer (8 bytes); `name` is its D type (`struct task_struct *`).
    Pointer { name: String },
    /// An enum of `size` bytes; `name` is its D type (`enum pid_type`), `constants` its
    /// enumerators as far as known (empty when the description is partial).
    Enum {
        size: u8,
        signed: bool,
        name: String,
        constants: Vec<(String, i64)>,
    },
    /// A D string in a buffer of `size` bytes.
    String { size: u32 },
    /// A D string kept as a number (a `u64` slot): its index in `names` (an index past
    /// them is ""). Aggregation keys holding probe names (`probefunc`...) are kept so.
    Name { names: Vec<String> },
    /// A struct or union of `size` bytes; `members` as far as known (a kernel type may be
    /// described by name and size alone).
    Record {
        union: bool,
        name: String,
        size: u32,
        members: Vec<Member>,
    },
    /// `len` elements of `element`, one after the other.
    Array { element: Box<ValueType>, len: u32 },
    /// `size` bytes with no more structure (an opaque type).
    Bytes { size: u32 },
    /// `tracemem()`'s `size` bytes of memory, shown as a hex dump; when `dynamic`, an
    /// 8-byte signed count precedes them: how many to show (all when negative).
    Memory { size: u32, dynamic: bool },
    /// A stack or symbol the consumer symbolizes.
    Symbolic(Datum),
}

/// One member of a struct or union.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    pub name: String,
    /// Byte offset from the start of the struct.
    pub offset: u32,
    /// For a bitfield: its first bit (from `offset`, least significant first) and width.
    pub bitfield: Option<(u8, u8)>,
    pub ty: ValueType,
}

impl ValueType {
    /// Bytes the value takes inside a struct, union or array (a string its buffer).
    pub fn size(&self) -> u32 {
        match self {
            ValueType::Integer { size, .. } | ValueType::Enum { size, .. } => u32::from(*size),
            ValueType::Pointer { .. } | ValueType::Name { .. } => 8,
            ValueType::String { size } | ValueType::Record { size, .. } => *size,
            ValueType::Bytes { size } => *size,
            ValueType::Memory { size, dynamic } => size + if *dynamic { 8 } else { 0 },
            ValueType::Array { element, len } => element.size().saturating_mul(*len),
            ValueType::Symbolic(d) => d.size(),
        }
    }

    /// Size and signedness of a scalar (integer, pointer, enum: held in a [`SCALAR_SLOT`] at
    /// the top level), as the consumer's integers keep them (pointers are unsigned 8-byte
    /// values); `None` for other values.
    pub fn scalar(&self) -> Option<(u8, bool)> {
        match self {
            ValueType::Integer { size, signed, .. } | ValueType::Enum { size, signed, .. } => {
                Some((*size, *signed))
            }
            ValueType::Pointer { .. } => Some((8, false)),
            _ => None,
        }
    }

    /// The D type's name (`int`, `string`, `struct foo`, `char [16]`).
    pub fn name(&self) -> String {
        match self {
            ValueType::Integer { name, .. }
            | ValueType::Pointer { name }
            | ValueType::Enum { name, .. }
            | ValueType::Record { name, .. } => name.clone(),
            ValueType::String { .. } | ValueType::Name { .. } => "string".to_string(),
            ValueType::Array { element, len } => format!("{} [{len}]", element.name()),
            ValueType::Bytes { size } | ValueType::Memory { size, .. } => {
                format!("uint8_t [{size}]")
            }
            ValueType::Symbolic(Datum::Stack { .. }) => "stack".to_string(),
            ValueType::Symbolic(Datum::UStack { .. }) => "ustack".to_string(),
            ValueType::Symbolic(Datum::UStackDepth { .. }) => "uint32_t".to_string(),
            ValueType::Symbolic(_) => "symbol".to_string(),
        }
    }

    /// The symbolized datum this value is, if it is one.
    pub fn datum(&self) -> Option<Datum> {
        match self {
            ValueType::Symbolic(d) => Some(*d),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let int = ValueType::Integer {
            size: 4,
            signed: true,
            name: "int".into(),
        };
        let arr = ValueType::Array {
            element: Box::new(int.clone()),
            len: 3,
        };
        assert_eq!(arr.size(), 12);
        assert_eq!(arr.name(), "int [3]");
        assert_eq!(
            ValueType::Symbolic(Datum::UStack {
                frames: 2,
                window: 0
            })
            .size(),
            24
        );
        assert_eq!(
            ValueType::Pointer {
                name: "void *".into()
            }
            .scalar(),
            Some((8, false))
        );
        assert_eq!(int.scalar(), Some((4, true)));
        assert_eq!(arr.scalar(), None);
        assert_eq!(Datum::USym.address_offset(), 8);
        assert_eq!(Datum::Sym.pid_offset(), None);
    }
}
