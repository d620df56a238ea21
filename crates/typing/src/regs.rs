//! D's `uregs[]` on x86-64: the `R_*` register constants and what each index reads.
//!
//! Indexes 0 to 20 follow the kernel's `struct pt_regs`, one 64-bit slot each, so
//! `uregs[i]` is slot `i` of the thread's user-mode register frame; 21 to 25 name
//! segment and trap state the kernel keeps in the task's `struct thread_struct`.

/// Slots of `struct pt_regs` on x86-64, in order (`R_R15` is slot 0).
const PT_REGS: [&str; 21] = [
    "R_R15", "R_R14", "R_R13", "R_R12", "R_RBP", "R_RBX", "R_R11", "R_R10", "R_R9", "R_R8",
    "R_RAX", "R_RCX", "R_RDX", "R_RSI", "R_RDI", "R_ERR", "R_RIP", "R_CS", "R_RFL", "R_RSP",
    "R_SS",
];

/// The `struct thread_struct` members read for indexes 21 and up, with their names.
pub const THREAD_MEMBERS: [(&str, &str); 5] = [
    ("R_DS", "ds"),
    ("R_ES", "es"),
    ("R_FS", "fsbase"),
    ("R_GS", "gsbase"),
    ("R_TRAPNO", "trap_nr"),
];

/// The number of `pt_regs` slots: indexes from here on read the thread's members.
pub const PT_REGS_SLOTS: u64 = PT_REGS.len() as u64;

/// One past the last valid `uregs[]` index.
pub const LIMIT: u64 = PT_REGS_SLOTS + THREAD_MEMBERS.len() as u64;

/// The value of register constant `name`, if it is one.
pub fn number(name: &str) -> Option<i64> {
    let canonical = match name {
        "R_EAX" | "R_R0" => "R_RAX",
        "R_EBX" | "R_R1" => "R_RBX",
        "R_ECX" => "R_RCX",
        "R_EDX" => "R_RDX",
        "R_ESI" => "R_RSI",
        "R_EDI" => "R_RDI",
        "R_EBP" | "R_FP" => "R_RBP",
        "R_EIP" | "R_PC" => "R_RIP",
        "R_EFL" | "R_PS" => "R_RFL",
        "R_ESP" | "R_SP" => "R_RSP",
        other => other,
    };
    if let Some(i) = PT_REGS.iter().position(|&r| r == canonical) {
        return Some(i as i64);
    }
    THREAD_MEMBERS
        .iter()
        .position(|&(r, _)| r == canonical)
        .map(|i| (PT_REGS.len() + i) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_numbers() {
        assert_eq!(number("R_R15"), Some(0));
        assert_eq!(number("R_PC"), Some(16));
        assert_eq!(number("R_SP"), Some(19));
        assert_eq!(number("R_R0"), Some(10));
        assert_eq!(number("R_R1"), Some(5));
        assert_eq!(number("R_SS"), Some(20));
        assert_eq!(number("R_DS"), Some(21));
        assert_eq!(number("R_TRAPNO"), Some(25));
        assert_eq!(number("R_NOPE"), None);
        assert_eq!(LIMIT, 26);
    }
}
