//! Kernel symbols other than per-CPU variables, on this machine: the section bounds every
//! kernel's symbol table lists (`__start_BTF`) are their addresses from `/proc/kallsyms`,
//! read in the real kernel as a cast says; the data symbols this kernel's table leaves out
//! (no `CONFIG_KALLSYMS_ALL`) are refused in words. (`tests/kernels/run.py`'s `ksym-*`
//! tests read `linux_banner` and `jiffies` where the table lists them.)

mod common;

use common::{assert_output, dtrace, require_root};

#[test]
fn a_listed_symbol_is_its_address_read_as_a_cast_says() {
    require_root();
    // BTF's magic, at the start of the kernel's BTF section; the address named back.
    let run = dtrace(&[
        "-qn",
        "BEGIN { printf(\"%x %a %d\\n\", *(unsigned short *)&`__start_BTF, &`__start_BTF,
                 (`__start_BTF & 0xffff) == 0xeb9f); exit(0); }",
    ]);
    assert_output(&run, 0, "eb9f vmlinux`__start_BTF 1\n\n", "");
}

#[test]
fn kernel_symbols_are_read_only() {
    require_root();
    let program = "BEGIN { `__start_BTF = 1; }";
    assert_output(
        &dtrace(&["-qn", program]),
        1,
        "",
        &format!(
            "dtrace: invalid probe specifier {program}: operator = can only be applied to a writable variable\n"
        ),
    );
}
