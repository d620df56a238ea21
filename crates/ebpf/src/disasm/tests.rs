//! Golden listings: every instruction class the code generator emits, in DTrace's syntax.

use super::*;

/// A program with one instruction of each kind, and its expected listing.
fn every_class() -> Vec<Insn> {
    let mut p = vec![
        Insn::mov64_reg(R1, R10),
        Insn::alu64_imm(BPF_ADD, R1, -16),
        Insn::alu64_reg(BPF_SUB, R2, R3),
        Insn::alu32_imm(BPF_LSH, R4, 3),
        Insn::alu32_reg(BPF_XOR, R5, R6),
        Insn::alu64_sdiv_reg(BPF_DIV, R7, R8),
        Insn::alu64_sdiv_reg(BPF_MOD, R7, R8),
        Insn::new(BPF_ALU64 | BPF_NEG, R9, R0, 0, 0),
        Insn::to_be(R1, 16),
        Insn::new(BPF_ALU | BPF_END, R1, R0, 0, 32),
        Insn::ldx(Size::B, R0, R1, 1),
        Insn::ldx(Size::H, R0, R1, 2),
        Insn::ldx(Size::W, R0, R1, 4),
        Insn::ldx(Size::DW, R0, R10, -8),
        Insn::stx(Size::B, R10, -1, R2),
        Insn::stx(Size::H, R10, -2, R2),
        Insn::stx(Size::W, R10, -4, R2),
        Insn::stx(Size::DW, R10, -8, R1),
        Insn::st(Size::DW, R10, -24, -1),
        Insn::st(Size::W, R9, 4, 7),
        Insn::atomic_add(Size::DW, R0, 16, R1),
        Insn::atomic_fetch_add(Size::W, R0, 0, R1),
        Insn::atomic_cmpxchg(Size::DW, R6, 8, R7),
    ];
    p.extend(Insn::ld_imm64(R2, 0x1_0000_0002));
    p.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, 1, 0));
    p.extend(Insn::ld_map(R2, BPF_PSEUDO_MAP_VALUE, 0, 8));
    p.extend(Insn::ld_map(R3, BPF_PSEUDO_FUNC, 14, 0));
    p.extend([
        Insn::jmp_imm(BPF_JEQ, R0, 0, 5),
        Insn::jmp_imm(BPF_JGT, R0, -1, 1),
        Insn::jmp_imm(BPF_JSLE, R0, -2048, 2),
        Insn::jmp_reg(BPF_JNE, R1, R2, -3),
        Insn::new(BPF_JMP32 | BPF_JSGE | BPF_X, R1, R2, 0, 1),
        Insn::ja(2),
        Insn::ja(0),
        Insn::ja_long(40000),
        Insn::call(helpers::MAP_LOOKUP_ELEM),
        Insn::call(9999),
        Insn::call_kfunc(63622),
        Insn::call_kfunc(5),
        Insn::call_local(-30),
        Insn::new(0xff, R0, R0, 0, 0),
        Insn::exit(),
    ]);
    p
}

const EVERY_CLASS: &str = "
Disassembly of program dtrace:::BEGIN:\n\
INS  OFF    OPCODE                  INSTRUCTION\n\
0000 00000: bf 1 a 0000 00000000    mov  %r1, %fp\n\
0001 00008: 07 1 0 0000 fffffff0    add  %r1, -16\n\
0002 00016: 1f 2 3 0000 00000000    sub  %r2, %r3\n\
0003 00024: 64 4 0 0000 00000003    lsh  %r4, 3\n\
0004 00032: ac 5 6 0000 00000000    xor  %r5, %r6\n\
0005 00040: 3f 7 8 0001 00000000    sdiv %r7, %r8\n\
0006 00048: 9f 7 8 0001 00000000    smod %r7, %r8\n\
0007 00056: 87 9 0 0000 00000000    neg  %r9\n\
0008 00064: dc 1 0 0000 00000010    tobe %r1, 16\n\
0009 00072: d4 1 0 0000 00000020    tole %r1, 32\n\
0010 00080: 71 0 1 0001 00000000    ldb  %r0, [%r1+1]\n\
0011 00088: 69 0 1 0002 00000000    ldh  %r0, [%r1+2]\n\
0012 00096: 61 0 1 0004 00000000    ldw  %r0, [%r1+4]\n\
0013 00104: 79 0 a fff8 00000000    lddw %r0, [%fp-8]\n\
0014 00112: 73 a 2 ffff 00000000    stb  [%fp-1], %r2\n\
0015 00120: 6b a 2 fffe 00000000    sth  [%fp-2], %r2\n\
0016 00128: 63 a 2 fffc 00000000    stw  [%fp-4], %r2\n\
0017 00136: 7b a 1 fff8 00000000    stdw [%fp-8], %r1\n\
0018 00144: 7a a 0 ffe8 ffffffff    stdw [%fp-24], -1\n\
0019 00152: 62 9 0 0004 00000007    stw  [%r9+4], 7\n\
0020 00160: db 0 1 0010 00000000    xadd [%r0+16], %r1\n\
0021 00168: c3 0 1 0000 00000001    xfadd [%r0+0], %r1\n\
0022 00176: db 6 7 0008 000000f1    cmpxchg [%r6+8], %r7\n\
0023 00184: 18 2 0 0000 00000002    lddw %r2, 0x0000000100000002\n\
0024 00192: 00 0 0 0000 00000001    \n\
0025 00200: 18 1 1 0000 00000001    lddw %r1, 0x0000000000000001\n\
0026 00208: 00 0 0 0000 00000000                                  ! buffers\n\
0027 00216: 18 2 2 0000 00000000    lddw %r2, 0x0000000800000000\n\
0028 00224: 00 0 0 0000 00000008                                  ! state\n\
0029 00232: 18 3 4 0000 0000000e    lddw %r3, 0x000000000000000e\n\
0030 00240: 00 0 0 0000 00000000                                  ! -> 044\n\
0031 00248: 15 0 0 0005 00000000    jeq  %r0, 0, 5                ! -> 037\n\
0032 00256: 25 0 0 0001 ffffffff    jgt  %r0, 4294967295, 1       ! -> 034\n\
0033 00264: d5 0 0 0002 fffff800    jsle %r0, -2048, 2            ! -> 036\n\
0034 00272: 5d 1 2 fffd 00000000    jne  %r1, %r2, -3             ! -> 032\n\
0035 00280: 7e 1 2 0000 00000001    jsge %r1, %r2, 0              ! -> 036\n\
0036 00288: 05 0 0 0002 00000000    ja   2                        ! -> 039\n\
0037 00296: 05 0 0 0000 00000000    nop\n\
0038 00304: 06 0 0 0000 00009c40    ja   40000                    ! -> 40039\n\
0039 00312: 85 0 0 0000 00000001    call bpf_map_lookup_elem\n\
0040 00320: 85 0 0 0000 0000270f    call helper#9999              ! unknown helper\n\
0041 00328: 85 0 2 0000 0000f886    call bpf_copy_from_user_str\n\
0042 00336: 85 0 2 0000 00000005    call kfunc#5                  ! unknown kfunc\n\
0043 00344: 85 0 1 0000 ffffffe2    call -30                      ! -> 014\n\
0044 00352: ff 0 0 0000 00000000    (illegal opcode)\n\
0045 00360: 95 0 0 0000 00000000    exit\n\
\n";

#[test]
fn lists_every_class_in_dtrace_syntax() {
    let symbols = Symbols {
        maps: vec!["state", "buffers"],
        kfuncs: vec![(63622, "bpf_copy_from_user_str")],
    };
    let got = listing("program dtrace:::BEGIN", &every_class(), &symbols);
    assert_eq!(got, EVERY_CLASS);
}

#[test]
fn a_slice_is_numbered_from_its_first_instruction() {
    // A clause's code cut from its program, its 64-bit load last and cut short: no
    // second slot to list, nothing to panic on.
    let mut program = vec![Insn::mov64_imm(R0, 0), Insn::jmp_imm(BPF_JNE, R0, 0, 1)];
    program.extend(Insn::ld_imm64(R1, 0x2a));
    let got = listing(
        "clause :::END, <dt_clause_1>",
        &program[1..3],
        &Symbols::default(),
    );
    assert_eq!(
        got,
        "
Disassembly of clause :::END, <dt_clause_1>:
INS  OFF    OPCODE                  INSTRUCTION
0000 00000: 55 0 0 0001 00000000    jne  %r0, 0, 1                ! -> 002
0001 00008: 18 1 0 0000 0000002a    lddw %r1, 0x000000000000002a

"
    );
}
