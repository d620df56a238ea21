//! Where a `-c` command stands when tracing starts (`-x evaltime`), as DTrace places it.
//!
//! The command is stopped by the kernel right after its exec (see `target.rs`). From
//! there it is run, with one-shot breakpoints, to the point the option names:
//!
//! - `exec`: nowhere; tracing sees the dynamic linker's work too.
//! - `preinit`: the program's entry point (`AT_ENTRY`), once the dynamic linker has mapped
//!   its libraries.
//! - `postinit` (DTrace's default) and `main`: `main()`, found by symbol in the program,
//!   or else as the first argument libc's `__libc_start_main` is given (stripped programs).
//!
//! A breakpoint is an `int3` written over the instruction's first byte through ptrace
//! while the process is stopped; when it traps, the byte is put back and the instruction
//! pointer rewound, so the program runs unchanged from there. Where the next point cannot
//! be found or written, the process stays where it is.

use std::path::Path;

/// Where tracing of a `-c` command starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalTime {
    Exec,
    Preinit,
    Main,
}

impl EvalTime {
    /// The option's value: `exec`, `preinit`, `postinit` or `main`.
    pub fn parse(value: &str) -> Option<EvalTime> {
        match value {
            "exec" => Some(EvalTime::Exec),
            "preinit" => Some(EvalTime::Preinit),
            "postinit" | "main" => Some(EvalTime::Main),
            _ => None,
        }
    }
}

/// The process died on the way (its wait status).
pub struct Died(pub i32);

/// Run the stopped tracee `pid`, executing `program`, to `when`.
pub fn advance(pid: i32, program: &Path, when: EvalTime) -> Result<(), Died> {
    if when == EvalTime::Exec {
        return Ok(());
    }
    let Some(entry) = auxv_entry(pid) else {
        return Ok(());
    };
    if !run_to(pid, entry)? || when == EvalTime::Preinit {
        return Ok(());
    }
    if let Some(main) = symbol_address(program, entry, "main") {
        run_to(pid, main)?;
        return Ok(());
    }
    if let Some(start_main) = library_symbol(pid, "libc.so", "__libc_start_main") {
        if run_to(pid, start_main)? {
            if let Some(main) = first_argument(pid) {
                run_to(pid, main)?;
            }
        }
    }
    Ok(())
}

/// `AT_ENTRY` of the process: its program's entry point.
fn auxv_entry(pid: i32) -> Option<u64> {
    let auxv = std::fs::read(format!("/proc/{pid}/auxv")).ok()?;
    auxv.chunks_exact(16).find_map(|pair| {
        let (key, value) = pair.split_at(8);
        (u64::from_ne_bytes(key.try_into().ok()?) == libc::AT_ENTRY)
            .then(|| value.try_into().ok().map(u64::from_ne_bytes))?
    })
}

/// The run-time address of function `name` in `program`, whose entry point is at `entry`
/// (the load bias is `entry` less the file's `e_entry`).
fn symbol_address(program: &Path, entry: u64, name: &str) -> Option<u64> {
    let data = std::fs::read(program).ok()?;
    let e_entry = dtrace_elf::u64_at(&data, 0x18).ok()?;
    function_at(&data, entry.wrapping_sub(e_entry), name)
}

/// The run-time address of function `name` in the mapped library whose file name starts
/// with `prefix`.
fn library_symbol(pid: i32, prefix: &str, name: &str) -> Option<u64> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let (start, path) = maps.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let path = *fields.get(5)?;
        let file = path.rsplit('/').next()?;
        let start = u64::from_str_radix(fields.first()?.split('-').next()?, 16).ok()?;
        let offset = u64::from_str_radix(fields.get(2)?, 16).ok()?;
        (file.starts_with(prefix) && offset == 0).then_some((start, path))
    })?;
    let data = std::fs::read(path).ok()?;
    let elf = dtrace_elf::Elf::parse(&data).ok()?;
    // The first loadable segment is mapped at `start`.
    let first = elf.segments.iter().find(|s| s.kind == 1)?;
    function_at(&data, start.wrapping_sub(first.vaddr & !0xfff), name)
}

/// The address of function `name` of the ELF file `data` loaded with `bias`.
fn function_at(data: &[u8], bias: u64, name: &str) -> Option<u64> {
    let sym = dtrace_elf::Elf::parse(data)
        .ok()?
        .symbols()
        .ok()?
        .into_iter()
        .find(|s| s.is_func && s.name == name)?;
    Some(bias.wrapping_add(sym.value))
}

/// The first integer argument (`rdi`) of the function the tracee is stopped at.
fn first_argument(pid: i32) -> Option<u64> {
    Some(registers(pid)?.rdi)
}

fn registers(pid: i32) -> Option<libc::user_regs_struct> {
    // SAFETY: user_regs_struct is plain data; all-zero is a valid value.
    let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    // SAFETY: PTRACE_GETREGS on our stopped tracee into a struct of the kernel's layout.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETREGS,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut regs as *mut libc::user_regs_struct,
        )
    };
    (r == 0).then_some(regs)
}

/// Run the stopped tracee until it reaches `addr` (a breakpoint there), and leave it
/// stopped at `addr` with its code as it was. `Ok(false)`: the breakpoint could not be
/// written, so the tracee was not run.
fn run_to(pid: i32, addr: u64) -> Result<bool, Died> {
    let at = addr as *mut libc::c_void;
    // SAFETY: PTRACE_PEEKDATA/POKEDATA on our stopped tracee: they read and write its
    // memory, not ours; errors are reported through errno.
    let word = unsafe {
        *libc::__errno_location() = 0;
        libc::ptrace(
            libc::PTRACE_PEEKDATA,
            pid,
            at,
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    // SAFETY: reading errno.
    if unsafe { *libc::__errno_location() } != 0 {
        return Ok(false);
    }
    let trap = (word & !0xff) | 0xcc;
    // SAFETY: as above.
    if unsafe { libc::ptrace(libc::PTRACE_POKEDATA, pid, at, trap as *mut libc::c_void) } != 0 {
        return Ok(false);
    }
    let mut signal = 0;
    loop {
        // SAFETY: continue our stopped tracee, delivering the signal it stopped with.
        unsafe {
            libc::ptrace(
                libc::PTRACE_CONT,
                pid,
                std::ptr::null_mut::<libc::c_void>(),
                signal as *mut libc::c_void,
            )
        };
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                signal = 0;
                continue;
            }
            return Err(Died(0));
        }
        if !libc::WIFSTOPPED(status) {
            return Err(Died(status));
        }
        signal = libc::WSTOPSIG(status);
        if signal == libc::SIGTRAP {
            match registers(pid) {
                Some(regs) if regs.rip == addr + 1 => {
                    let mut regs = regs;
                    regs.rip = addr;
                    // SAFETY: restore the word and the rewound registers of our stopped
                    // tracee.
                    unsafe {
                        libc::ptrace(libc::PTRACE_POKEDATA, pid, at, word as *mut libc::c_void);
                        libc::ptrace(
                            libc::PTRACE_SETREGS,
                            pid,
                            std::ptr::null_mut::<libc::c_void>(),
                            &regs as *const libc::user_regs_struct,
                        );
                    }
                    return Ok(true);
                }
                // Not ours: the program's own trap, delivered as it would be.
                _ => {}
            }
        }
    }
}
