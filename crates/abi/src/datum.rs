//! Recorded data that the consumer symbolizes rather than prints as a D value: stacks and
//! symbol addresses, in records and aggregation keys.

/// Default `stack()` depth (DTrace's `stackframes` option).
pub const STACK_FRAMES: u32 = 20;
/// Default `ustack()` depth (DTrace's `ustackframes` option).
pub const USTACK_FRAMES: u32 = 20;
/// Deepest stack the kernel hands out (`kernel.perf_event_max_stack` defaults to 127);
/// `stackdepth` and `ustackdepth` count at most this many frames.
pub const MAX_STACK_FRAMES: u32 = 127;

/// Recorded data that is not a plain D value but something the consumer symbolizes, in a
/// record or in an aggregation key.
///
/// Layouts: a kernel stack is `frames` u64 program counters (zero after the last frame,
/// as `bpf_get_stack` leaves them); a user stack is the process id (u64) then `frames`
/// user program counters; kernel symbols (`func sym mod`) are one u64 address; user
/// symbols (`ufunc usym umod uaddr`) are the process id then the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Datum {
    /// `stack(frames)`
    Stack { frames: u32 },
    /// `ustack(frames)`
    UStack { frames: u32 },
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
            Datum::UStack { frames } => 8 + frames * 8,
            Datum::Sym | Datum::Mod => 8,
            Datum::USym | Datum::UMod | Datum::UAddr => 16,
        }
    }

    /// Whether the datum holds user addresses (and a process id).
    pub fn user(&self) -> bool {
        matches!(
            self,
            Datum::UStack { .. } | Datum::USym | Datum::UMod | Datum::UAddr
        )
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
