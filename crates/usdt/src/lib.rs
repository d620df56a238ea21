//! USDT probes for Rust programs, readable by every tool that reads systemtap's `sys/sdt.h`
//! probes (`dtrace`, bpftrace, perf, gdb, systemtap, BCC).
//!
//! ```
//! use std::ffi::CStr;
//! let (id, name): (u64, &CStr) = (7, c"item");
//! // While nobody traces it: one semaphore test; the arguments are not evaluated.
//! dtrace_usdt::probe!(myapp, start, id, name);
//! dtrace_usdt::probe!(myapp, done, id, expensive(id));
//! if dtrace_usdt::enabled!(myapp, start) {
//!     // Something only worth doing while `myapp:::start` is traced.
//! }
//! # fn expensive(x: u64) -> u64 { x * 2 }
//! ```
//!
//! Probes can also be declared once in a DTrace provider file (`provider myapp { probe
//! start(int id, char *name); };`), the same file a C program gives `dtrace -h`: the
//! `dtrace-usdt-build` crate turns it, from a build script, into typed macros
//! (`myapp_start!(id, name)`) and records the declared types for the tracer.
//!
//! # How it works
//!
//! [`probe!`] tests the probe's semaphore and, only while it is nonzero, evaluates the
//! arguments and reaches the probe site: one inline `asm!` block, modelled on
//! `_SDT_ASM_BODY` of `sys/sdt.h`:
//!
//! - a 5-byte nop (`nopl 0x0(%rax,%rax,1)`, `0f 1f 44 00 00`) at the probe site (label
//!   `990`), where a tracer puts its uprobe. Kernels that optimize uprobes (6.18 here) turn
//!   a uprobe on a 5-byte nop into a `call` to the kernel's trampoline, cheaper per fire
//!   than the breakpoint other sites take; older kernels and other tracers see an ordinary
//!   `sys/sdt.h` site. That `call` pushes below the stack pointer, where a leaf function
//!   may keep data (the red zone), so the block is not `nostack`: an `asm!` without it may
//!   push, and the compiler keeps nothing below the stack pointer in the function around it
//!   (measured: a leaf keeping twelve words there returned 19,999 wrong sums in 20,000
//!   traced calls with `nostack`, none without; `examples/leaf.rs`);
//! - an `SHT_NOTE` note in `.note.stapsdt` (owner `"stapsdt"`, type 3) holding the site's
//!   address, the address of `_.stapsdt.base` (so tools can undo prelinking), the address
//!   of the probe's semaphore, then the provider, the name and the argument specs as
//!   NUL-terminated strings. The note section uses the `"?"` flag, like `sys/sdt.h`, so it
//!   joins the section group of the function it sits in and is dropped with it;
//! - `_.stapsdt.base`, a one-byte symbol in a COMDAT section, defined once per object;
//! - the semaphore: a `u16` named `__usdt_sema.PROVIDER.NAME` in the writable `.probes`
//!   section, weak, hidden and in its own COMDAT group, so every site of one probe in one
//!   executable or shared library shares one semaphore (as with `sys/sdt.h`'s
//!   `provider_name_semaphore`), across codegen units and crates. A tracer passes its file
//!   offset to the kernel as the uprobe's `ref_ctr_offset`, and the kernel increments it in
//!   every process that maps the binary while the probe is traced. [`enabled!`] reads it
//!   with one `movzwl`.
//!
//! Arguments are asm `in(reg)` operands, so the note's spec names the register the compiler
//! chose (`-8@%rdi -8@%rax`). Rust's `asm!` has no memory or immediate operands and a
//! `macro_rules!` macro cannot see an argument's type when it writes the template, so every
//! argument travels as a 64-bit value: signed integers are sign-extended, unsigned ones,
//! `bool`, `char` and pointers zero-extended (see [`Arg`]), and every spec says `-8` — a
//! signed 64-bit value, which is what DTrace's `arg0..argN` are. Strings are passed as
//! pointers; a tracer's `copyinstr()` needs them NUL-terminated, so pass a `&CStr` (or a
//! pointer to bytes ending in `\0`), not a `&str`.
//!
//! Up to 12 arguments, as in `sys/sdt.h` (x86_64 has 13 registers for `in(reg)` operands).
//!
//! Only x86_64 emits probes. On other architectures the macros still evaluate their
//! arguments (so programs build and behave the same), emit nothing, and [`enabled!`] is
//! `false`.
//!
//! The macros expand to `unsafe { asm!(..) }` in the caller's crate, so a crate with
//! `#![forbid(unsafe_code)]` cannot use them.

#![no_std]

/// A value a probe can carry: converted to the 64-bit register value the tracer reads.
///
/// Signed integers are sign-extended, unsigned integers, `bool` and `char` zero-extended;
/// pointers and references become their address (the data pointer of a fat pointer, so
/// `&CStr` and `&[u8]` give the address of their first byte).
pub trait Arg {
    /// The value as the probe passes it.
    fn sdt_value(self) -> u64;
}

macro_rules! signed_args {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            #[inline(always)]
            fn sdt_value(self) -> u64 {
                self as i64 as u64
            }
        }
    )*};
}

macro_rules! unsigned_args {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            #[inline(always)]
            fn sdt_value(self) -> u64 {
                self as u64
            }
        }
    )*};
}

signed_args!(i8, i16, i32, i64, isize);
unsigned_args!(u8, u16, u32, u64, usize, bool, char);

impl<T: ?Sized> Arg for *const T {
    #[inline(always)]
    fn sdt_value(self) -> u64 {
        self.cast::<u8>() as usize as u64
    }
}

impl<T: ?Sized> Arg for *mut T {
    #[inline(always)]
    fn sdt_value(self) -> u64 {
        self.cast::<u8>() as usize as u64
    }
}

impl<T: ?Sized> Arg for &T {
    #[inline(always)]
    fn sdt_value(self) -> u64 {
        (self as *const T).sdt_value()
    }
}

impl<T: ?Sized> Arg for core::ptr::NonNull<T> {
    #[inline(always)]
    fn sdt_value(self) -> u64 {
        self.as_ptr().sdt_value()
    }
}

/// A USDT probe: `probe!(provider, name, arg0, arg1, ...)`, up to 12 arguments of [`Arg`]
/// types. While the probe is not traced it costs one test of its semaphore and the
/// arguments are not evaluated; while traced, they are, and the site (a `nop`) fires.
///
/// Following DTrace, a `__` in `name` reads as `-` in D (`item__done` is `item-done`).
#[macro_export]
macro_rules! probe {
    ($provider:ident, $name:ident $(, $arg:expr)* $(,)?) => {
        if $crate::enabled!($provider, $name) {
            $crate::site!($provider, $name $(, $arg)*);
        }
    };
}

/// The probe site alone, reached whatever the semaphore says: its arguments are always
/// evaluated. [`probe!`] is the usual way; this is for code that tested [`enabled!`]
/// itself.
#[macro_export]
macro_rules! site {
    ($provider:ident, $name:ident $(,)?) => {
        $crate::__usdt_site!($provider, $name, "")
    };
    ($provider:ident, $name:ident, $first:expr $(, $rest:expr)* $(,)?) => {
        $crate::__usdt_site!(
            $provider,
            $name,
            ::core::concat!("-8@{}" $(, $crate::__usdt_spec!($rest))*),
            $first $(, $rest)*
        )
    };
}

/// `true` while some tracer has probe `provider:name` of this binary enabled: reads its
/// is-enabled semaphore, which the kernel increments for every attached site.
#[cfg(target_arch = "x86_64")]
#[macro_export]
macro_rules! enabled {
    ($provider:ident, $name:ident $(,)?) => {{
        let count: u32;
        // SAFETY: loads the 2-byte semaphore that the same block defines in `.probes`;
        // touches no other memory, no stack, no flags.
        #[allow(unused_unsafe)]
        unsafe {
            ::core::arch::asm!(
                $crate::__usdt_semaphore_def!($provider, $name),
                ::core::concat!(
                    "movzwl ",
                    $crate::__usdt_semaphore_sym!($provider, $name),
                    "(%rip), {0:e}"
                ),
                out(reg) count,
                options(att_syntax, nostack, preserves_flags, readonly),
            );
        }
        count != 0
    }};
}

/// `true` while some tracer has probe `provider:name` enabled (never, on this architecture).
#[cfg(not(target_arch = "x86_64"))]
#[macro_export]
macro_rules! enabled {
    ($provider:ident, $name:ident $(,)?) => {
        false
    };
}

/// The is-enabled semaphore of probe `provider:name` of this binary, as
/// `&'static AtomicU16`: the count of tracer sites attached to it. For tests and tools;
/// [`enabled!`] is the cheap check.
#[cfg(target_arch = "x86_64")]
#[macro_export]
macro_rules! semaphore {
    ($provider:ident, $name:ident $(,)?) => {{
        let addr: usize;
        // SAFETY: computes the address of the semaphore the same block defines; reads and
        // writes nothing.
        #[allow(unused_unsafe)]
        unsafe {
            ::core::arch::asm!(
                $crate::__usdt_semaphore_def!($provider, $name),
                ::core::concat!(
                    "leaq ",
                    $crate::__usdt_semaphore_sym!($provider, $name),
                    "(%rip), {0}"
                ),
                out(reg) addr,
                options(att_syntax, nostack, preserves_flags, nomem, pure),
            );
        }
        // SAFETY: the address is that of a 2-aligned `u16` in a writable section, alive for
        // the whole program; only atomics (and the kernel, atomically) touch it.
        let sema: &'static ::core::sync::atomic::AtomicU16 =
            unsafe { &*(addr as *const ::core::sync::atomic::AtomicU16) };
        sema
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __usdt_spec {
    ($arg:expr) => {
        " -8@{}"
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __usdt_semaphore_sym {
    ($provider:ident, $name:ident) => {
        ::core::concat!(
            "__usdt_sema.",
            ::core::stringify!($provider),
            ".",
            ::core::stringify!($name)
        )
    };
}

/// Defines the semaphore once per object file (the first block that mentions it), in its
/// own COMDAT group so the linker keeps one per executable or shared library.
#[doc(hidden)]
#[macro_export]
macro_rules! __usdt_semaphore_def {
    ($provider:ident, $name:ident) => {
        ::core::concat!(
            ".ifndef ",
            $crate::__usdt_semaphore_sym!($provider, $name),
            "\n",
            ".pushsection .probes, \"awGR\", \"progbits\", ",
            $crate::__usdt_semaphore_sym!($provider, $name),
            ", comdat\n",
            ".weak ",
            $crate::__usdt_semaphore_sym!($provider, $name),
            "\n",
            ".hidden ",
            $crate::__usdt_semaphore_sym!($provider, $name),
            "\n",
            ".type ",
            $crate::__usdt_semaphore_sym!($provider, $name),
            ", \"object\"\n",
            ".balign 2\n",
            $crate::__usdt_semaphore_sym!($provider, $name),
            ":\n",
            ".2byte 0\n",
            ".size ",
            $crate::__usdt_semaphore_sym!($provider, $name),
            ", 2\n",
            ".popsection\n",
            ".endif"
        )
    };
}

#[doc(hidden)]
#[cfg(target_arch = "x86_64")]
#[macro_export]
macro_rules! __usdt_site {
    ($provider:ident, $name:ident, $specs:expr $(, $arg:expr)*) => {{
        // SAFETY: the block executes one 5-byte `nop`; everything else is data emitted into
        // other sections. The operands are only named in the note, for a tracer to read.
        #[allow(unused_unsafe)]
        unsafe {
            ::core::arch::asm!(
                $crate::__usdt_semaphore_def!($provider, $name),
                "990: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
                ".pushsection .note.stapsdt, \"?\", \"note\"",
                ".balign 4",
                ".4byte 992f-991f, 994f-993f, 3",
                "991: .asciz \"stapsdt\"",
                "992: .balign 4",
                "993: .8byte 990b",
                ".8byte _.stapsdt.base",
                ::core::concat!(".8byte ", $crate::__usdt_semaphore_sym!($provider, $name)),
                ::core::concat!(".asciz \"", ::core::stringify!($provider), "\""),
                ::core::concat!(".asciz \"", ::core::stringify!($name), "\""),
                ::core::concat!(".asciz \"", $specs, "\""),
                "994: .balign 4",
                ".popsection",
                ".ifndef _.stapsdt.base",
                ".pushsection .stapsdt.base, \"aGR\", \"progbits\", .stapsdt.base, comdat",
                ".weak _.stapsdt.base",
                ".hidden _.stapsdt.base",
                "_.stapsdt.base: .space 1",
                ".size _.stapsdt.base, 1",
                ".popsection",
                ".endif",
                $(in(reg) $crate::Arg::sdt_value($arg),)*
                options(att_syntax, readonly, preserves_flags),
            );
        }
    }};
}

#[doc(hidden)]
#[cfg(not(target_arch = "x86_64"))]
#[macro_export]
macro_rules! __usdt_site {
    ($provider:ident, $name:ident, $specs:expr $(, $arg:expr)*) => {{
        $(let _ = $crate::Arg::sdt_value($arg);)*
    }};
}

/// `d_source!("D text")`: ship the D types and translators of this program's probe
/// arguments in it, in a `.note.dtrace` note (owner `dtrace`, type 2, the text and a NUL)
/// that `dtrace` loads for the clauses on this binary's probes (docs/TRANSLATORS.md), as
/// `DTRACE_D_SOURCE` of a `dtrace -h` header does for C. The text must be a constant.
///
/// ```
/// dtrace_usdt::d_source!("struct job { int id; };
/// translator struct job < int64_t x > { id = x; };");
/// ```
#[macro_export]
macro_rules! d_source {
    ($text:expr) => {
        const _: () = {
            #[link_section = ".note.dtrace"]
            #[used]
            static NOTE: $crate::DSourceNote<{ $text.len() + 1 }> = $crate::DSourceNote::new($text);
        };
    };
}

/// The note [`d_source!`] puts in the binary: an ELF note header, the owner `dtrace` padded
/// to 8 bytes, and the text with its NUL (the struct's alignment pads it to 4 bytes).
#[doc(hidden)]
#[repr(C, align(4))]
pub struct DSourceNote<const N: usize> {
    namesz: u32,
    descsz: u32,
    kind: u32,
    owner: [u8; 8],
    desc: [u8; N],
}

impl<const N: usize> DSourceNote<N> {
    /// The note of `text` (`N` is its length and 1).
    pub const fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut desc = [0u8; N];
        let mut i = 0;
        while i < bytes.len() {
            desc[i] = bytes[i];
            i += 1;
        }
        DSourceNote {
            namesz: 7,
            descsz: N as u32,
            kind: 2,
            owner: *b"dtrace\0\0",
            desc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Arg;

    #[test]
    fn arguments_are_extended_to_64_bits() {
        assert_eq!((-1i8).sdt_value(), u64::MAX);
        assert_eq!((-2i32).sdt_value(), (-2i64) as u64);
        assert_eq!(0xffu8.sdt_value(), 0xff);
        assert_eq!(u32::MAX.sdt_value(), 0xffff_ffff);
        assert_eq!(true.sdt_value(), 1);
        assert_eq!('A'.sdt_value(), 65);
        let s = c"hi";
        assert_eq!(s.sdt_value(), s.as_ptr() as usize as u64);
        let bytes = [1u8, 2];
        assert_eq!(bytes[..].sdt_value(), bytes.as_ptr() as usize as u64);
    }
}
