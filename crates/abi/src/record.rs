//! Records in the ring buffer, fault records, and the per-CPU counters beside them.
//!
//! A record is a [`HEADER_SIZE`]-byte header `[epid u32][cpu u32][presence u64]` followed by
//! each action's data at the offset its [`crate::desc::Field`] names. The presence word holds
//! one bit per action under an `if`, set when the action ran. The epid names one clause on
//! one probe ([`crate::desc::EnabledProbe`]).
//!
//! A runtime fault writes a [`fault`] record instead (epid [`FAULT_EPID`]) and abandons the
//! rest of the clause.

/// Offset of the record's epid (u32).
pub const EPID: usize = 0;
/// Offset of the CPU the record was written on (u32).
pub const CPU: usize = 4;
/// Offset of the presence word (u64): bit `n` set when the action owning bit `n` ran.
pub const PRESENCE: usize = 8;
/// Size of the header; the first action's data starts here.
pub const HEADER_SIZE: u32 = 16;

/// Bytes of the speculation id a speculating clause's record holds (its first field).
/// `specsize` does not count them: DTrace keeps the id in the record's header.
pub const SPEC_ID_SIZE: u32 = 8;

/// The epid of a fault record.
pub const FAULT_EPID: u32 = u32::MAX;

/// A fault record: the header's epid is [`FAULT_EPID`] and its cpu the faulting CPU; then
/// `[epid u32][fault u32][action u32][offset u32][addr u64]`.
pub mod fault {
    /// The enabled probe whose clause faulted (u32).
    pub const EPID: usize = 8;
    /// The fault's kind, a [`super::Fault`] number (u32).
    pub const KIND: usize = 12;
    /// The action that faulted, 1-based; 0 for the predicate (u32).
    pub const ACTION: usize = 16;
    /// The offset of the faulting code in the program, in instructions (u32).
    pub const OFFSET: usize = 20;
    /// The faulting address, for address faults (u64).
    pub const ADDR: usize = 24;
    /// Size of a fault record.
    pub const SIZE: u32 = 32;
}

/// Runtime fault kinds, numbered as DTrace numbers them (`DTRACEFLT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Fault {
    /// `DTRACEFLT_BADADDR`: invalid address (the address is recorded).
    BadAddr = 1,
    /// `DTRACEFLT_BADALIGN`: invalid alignment (the address is recorded).
    BadAlign = 2,
    /// `DTRACEFLT_ILLOP`: illegal operation.
    IllegalOp = 3,
    /// `DTRACEFLT_DIVZERO`: divide-by-zero.
    DivZero = 4,
    /// `DTRACEFLT_NOSCRATCH`: out of scratch space.
    NoScratch = 5,
    /// `DTRACEFLT_KPRIV`: invalid kernel access.
    KernelPriv = 6,
    /// `DTRACEFLT_UPRIV`: invalid user access.
    UserPriv = 7,
    /// `DTRACEFLT_TUPOFLOW`: tuple stack overflow.
    TupleOverflow = 8,
    /// `DTRACEFLT_BADSTACK`: bad stack (the address is recorded).
    BadStack = 9,
    /// `DTRACEFLT_BADSIZE`: a size out of range (the size is recorded).
    BadSize = 10,
    /// `DTRACEFLT_BADINDEX`: an array index out of bounds (the index is recorded).
    BadIndex = 11,
    /// `DTRACEFLT_LIBRARY`: library-level fault.
    Library = 1000,
}

impl Fault {
    /// Every kind, for lookups by number.
    pub const ALL: [Fault; 12] = [
        Fault::BadAddr,
        Fault::BadAlign,
        Fault::IllegalOp,
        Fault::DivZero,
        Fault::NoScratch,
        Fault::KernelPriv,
        Fault::UserPriv,
        Fault::TupleOverflow,
        Fault::BadStack,
        Fault::BadSize,
        Fault::BadIndex,
        Fault::Library,
    ];

    /// The kind numbered `code`, if any.
    pub fn from_code(code: u32) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| *f as u32 == code)
    }

    /// DTrace's name of the kind (`DTRACEFLT_BADADDR`).
    pub fn name(self) -> &'static str {
        match self {
            Fault::BadAddr => "DTRACEFLT_BADADDR",
            Fault::BadAlign => "DTRACEFLT_BADALIGN",
            Fault::IllegalOp => "DTRACEFLT_ILLOP",
            Fault::DivZero => "DTRACEFLT_DIVZERO",
            Fault::NoScratch => "DTRACEFLT_NOSCRATCH",
            Fault::KernelPriv => "DTRACEFLT_KPRIV",
            Fault::UserPriv => "DTRACEFLT_UPRIV",
            Fault::TupleOverflow => "DTRACEFLT_TUPOFLOW",
            Fault::BadStack => "DTRACEFLT_BADSTACK",
            Fault::BadSize => "DTRACEFLT_BADSIZE",
            Fault::BadIndex => "DTRACEFLT_BADINDEX",
            Fault::Library => "DTRACEFLT_LIBRARY",
        }
    }

    /// Whether the fault record's address means something for this kind.
    pub fn has_address(self) -> bool {
        matches!(
            self,
            Fault::BadAddr | Fault::BadAlign | Fault::BadStack | Fault::BadSize | Fault::BadIndex
        )
    }
}

/// Scratch areas per CPU. A program claims the first free one of its CPU for the whole
/// firing (a compare-and-exchange on its claim word) and frees it when it leaves, so
/// programs that run inside one another on a CPU (a perf-event program interrupting a raw
/// tracepoint's, a preempted uprobe program and the next task's) never share scratch: their
/// records, keys, strings and `this->` variables stay apart. A firing that finds every level
/// taken is counted in [`DropKind::Nested`] and does nothing.
pub const SCRATCH_LEVELS: u32 = 4;

/// The per-CPU drop counters: `u64` slots of one per-CPU array element, indexed by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum DropKind {
    /// A record did not fit in the ring buffer.
    Record = 0,
    /// A dynamic variable could not be created (map full).
    Dynamic = 1,
    /// A probe fired while every scratch area of its CPU was taken by firings it
    /// interrupted ([`SCRATCH_LEVELS`] deep), and did nothing.
    Nested = 2,
    /// A clause of the ERROR probe faulted (DTrace's "errors in ERROR probe enabling").
    ErrorInError = 3,
    /// A speculating clause recorded more than `specsize`, or recorded into a speculation
    /// already committed or discarded.
    Speculative = 4,
    /// `speculation()` found no free speculation, some being committed or discarded.
    SpecBusy = 5,
    /// `speculation()` found no free speculation.
    SpecUnavail = 6,
    /// An aggregation could not take a new key (its map is full).
    Aggregation = 7,
}

impl DropKind {
    pub const COUNT: u32 = 8;

    /// Byte offset of this kind's counter in one CPU's value.
    pub fn offset(self) -> usize {
        self as usize * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_fit() {
        assert_eq!(PRESENCE + 8, HEADER_SIZE as usize);
        assert_eq!(fault::ADDR + 8, fault::SIZE as usize);
        assert_eq!(DropKind::Nested.offset(), 16);
        assert_eq!((DropKind::Aggregation as u32 + 1), DropKind::COUNT);
    }

    #[test]
    fn fault_numbers() {
        assert_eq!(Fault::from_code(4), Some(Fault::DivZero));
        assert_eq!(Fault::from_code(1000), Some(Fault::Library));
        assert_eq!(Fault::from_code(77), None);
        assert_eq!(Fault::BadAddr.name(), "DTRACEFLT_BADADDR");
        assert!(Fault::BadAddr.has_address() && !Fault::DivZero.has_address());
    }
}
