//! User stacks unwound by call frame information, for code built without frame pointers.
//!
//! A recorded `ustack()` holds the kernel's frame-pointer stack and, beside it, the user
//! `rip`, `rsp` and `rbp` at the probe and a window of the stack from `rsp` up
//! ([`dtrace_abi::datum::Datum::UStack`]). Here that window is unwound frame by frame with
//! the `.eh_frame` of the object mapped at each program counter (found through its
//! `.eh_frame_hdr` search table when it has one): the canonical frame address from `rsp` or
//! `rbp`, the return address and the saved `rbp` read from the window. This is the
//! information exception handling itself uses, so every object a distribution ships has
//! it, with or without frame pointers.
//!
//! The walk ends where the call frame information says the stack ends (`_start`'s return
//! address is undefined), or where it cannot go on: an address in no mapped file (JIT code,
//! the vDSO), no entry for it, a rule other than a register plus an offset (PLT entries),
//! or a saved value outside the window. Then the rest comes from the frame-pointer stack:
//! its frames after the last one both found, when it has that frame (so a stack deeper
//! than the window still shows its outer frames where they keep frame pointers).
//!
//! The CFI is parsed by `gimli`, the DWARF reader the Rust toolchain itself uses for
//! backtraces: well kept, and reading `.eh_frame` right (augmentations, pointer encodings,
//! CIE/FDE programs) is most of the work of an unwinder. Only its reading half is built.

use gimli::{
    BaseAddresses, CfaRule, EhFrame, EhFrameHdr, LittleEndian, RegisterRule, UnwindContext,
    UnwindSection, X86_64,
};

use crate::symbolize::Symbolizer;

/// The user registers and stack window a record carries.
pub struct Window<'a> {
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
    /// The stack bytes from `sp` up.
    pub bytes: &'a [u8],
}

impl Window<'_> {
    /// The u64 the stack held at `addr`, if the window has it.
    fn read(&self, addr: u64) -> Option<u64> {
        let at = usize::try_from(addr.checked_sub(self.sp)?).ok()?;
        let b = self.bytes.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }
}

/// The `.eh_frame` (and `.eh_frame_hdr`) of one object file, with their link-time
/// addresses; empty when the file has none or cannot be read.
#[derive(Default)]
pub struct ObjectCfi {
    eh_frame: Option<(u64, Vec<u8>)>,
    eh_frame_hdr: Option<(u64, Vec<u8>)>,
}

impl ObjectCfi {
    pub fn load(path: &str) -> ObjectCfi {
        let Ok(data) = std::fs::read(path) else {
            return ObjectCfi::default();
        };
        let Ok(elf) = dtrace_elf::Elf::parse(&data) else {
            return ObjectCfi::default();
        };
        let section = |name: &str| {
            let s = elf.section(name)?;
            Some((s.addr, elf.section_data(s).ok()?.to_vec()))
        };
        ObjectCfi {
            eh_frame: section(".eh_frame"),
            eh_frame_hdr: section(".eh_frame_hdr"),
        }
    }

    /// How to find the caller's frame at link-time address `v`.
    fn step(&self, v: u64) -> Option<Step> {
        let (frame_addr, frame) = self.eh_frame.as_ref()?;
        let mut bases = BaseAddresses::default().set_eh_frame(*frame_addr);
        let eh_frame = EhFrame::new(frame, LittleEndian);
        let mut ctx = UnwindContext::new();
        let hdr = self.eh_frame_hdr.as_ref().and_then(|(addr, hdr)| {
            bases = bases.clone().set_eh_frame_hdr(*addr);
            EhFrameHdr::new(hdr, LittleEndian).parse(&bases, 8).ok()
        });
        let row = match hdr.as_ref().and_then(|h| h.table()) {
            Some(table) => table
                .unwind_info_for_address(&eh_frame, &bases, &mut ctx, v, EhFrame::cie_from_offset)
                .ok()?,
            None => eh_frame
                .unwind_info_for_address(&bases, &mut ctx, v, EhFrame::cie_from_offset)
                .ok()?,
        };
        let CfaRule::RegisterAndOffset { register, offset } = *row.cfa() else {
            return None;
        };
        let from_bp = match register {
            X86_64::RSP => false,
            X86_64::RBP => true,
            _ => return None,
        };
        let saved = |rule: RegisterRule<usize>| match rule {
            RegisterRule::Offset(n) => Some(Saved::At(n)),
            RegisterRule::Undefined => Some(Saved::Undefined),
            RegisterRule::SameValue => Some(Saved::Same),
            _ => None,
        };
        Some(Step {
            from_bp,
            offset,
            ra: saved(row.register(X86_64::RA))?,
            // A callee-saved register the rules do not name keeps its value.
            bp: match row.register(X86_64::RBP) {
                RegisterRule::Offset(n) => Saved::At(n),
                _ => Saved::Same,
            },
        })
    }
}

/// Where a register's value in the caller is.
#[derive(Clone, Copy)]
enum Saved {
    /// At the canonical frame address plus this offset.
    At(i64),
    /// Unchanged.
    Same,
    /// Nowhere: for the return address, the outermost frame.
    Undefined,
}

/// One frame's rules: the canonical frame address is `rbp` (else `rsp`) plus `offset`.
struct Step {
    from_bp: bool,
    offset: i64,
    ra: Saved,
    bp: Saved,
}

/// The program counters of the user stack of `pid` (innermost first, at most `max`) from
/// the window, completed by the frame-pointer stack `fp` where the walk stops short (see
/// the module documentation).
pub fn user_stack(
    symbols: &mut Symbolizer,
    pid: u32,
    w: &Window<'_>,
    fp: &[u64],
    max: usize,
) -> Vec<u64> {
    let (mut pcs, ended) = walk(symbols, pid, w, max);
    if !ended {
        let last = pcs.last().copied();
        if let Some(i) = fp.iter().position(|&pc| Some(pc) == last) {
            pcs.extend(&fp[i + 1..]);
        }
    }
    pcs.truncate(max);
    pcs
}

/// Unwind from the window's registers: the program counters found, and whether the walk
/// reached the outermost frame (or `max` frames).
fn walk(symbols: &mut Symbolizer, pid: u32, w: &Window<'_>, max: usize) -> (Vec<u64>, bool) {
    let mut pcs = vec![w.ip];
    let (mut pc, mut sp, mut bp) = (w.ip, w.sp, w.bp);
    while pcs.len() < max {
        // A return address is just past its call: look up the call itself.
        let at = if pcs.len() == 1 { pc } else { pc - 1 };
        let Some((path, v)) = symbols.object_address(pid, at) else {
            return (pcs, false);
        };
        let Some(step) = symbols.cfi(&path).step(v) else {
            return (pcs, false);
        };
        let base = if step.from_bp { bp } else { sp };
        let cfa = base.wrapping_add_signed(step.offset);
        let read = |s: Saved, current: u64| match s {
            Saved::At(n) => w.read(cfa.wrapping_add_signed(n)),
            Saved::Same => Some(current),
            Saved::Undefined => None,
        };
        // The stack grows down: a caller's frame is above its callee's.
        if cfa <= sp {
            return (pcs, false);
        }
        let ra = match step.ra {
            Saved::Undefined => return (pcs, true),
            s => match read(s, pc) {
                Some(ra) => ra,
                None => return (pcs, false),
            },
        };
        if ra == 0 {
            return (pcs, true);
        }
        let Some(caller_bp) = read(step.bp, bp) else {
            return (pcs, false);
        };
        (pc, sp, bp) = (ra, cfa, caller_bp);
        pcs.push(pc);
    }
    (pcs, true)
}
