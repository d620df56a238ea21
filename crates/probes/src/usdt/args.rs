//! USDT argument specs (x86_64, AT&T syntax, as `sys/sdt.h` writes them): `N@%reg`,
//! `N@off(%reg)`, `N@off(%base,%index,scale)`, `N@$imm`, `N@sym+off(%rip)`, `N@sym`.
//! `N` is the size in bytes, negative for signed values (`-4@%edi` is an `int` in `edi`).
//! Registers of every width (`%al %ah %ax %eax %rax %r8d %r8w %r8b %sil ...`) map to the
//! 64-bit register of the kernel's `struct pt_regs` they live in.

use std::fmt;

/// An x86_64 general register (or `rip`), as found in `struct pt_regs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reg {
    Rax,
    Rbx,
    Rcx,
    Rdx,
    Rsi,
    Rdi,
    Rbp,
    Rsp,
    R8,
    R9,
    R10,
    R11,
    R12,
    R13,
    R14,
    R15,
    Rip,
}

impl Reg {
    /// Byte offset of the register in x86_64 `struct pt_regs` (the uprobe program's context).
    pub fn pt_regs_offset(self) -> i16 {
        match self {
            Reg::R15 => 0,
            Reg::R14 => 8,
            Reg::R13 => 16,
            Reg::R12 => 24,
            Reg::Rbp => 32,
            Reg::Rbx => 40,
            Reg::R11 => 48,
            Reg::R10 => 56,
            Reg::R9 => 64,
            Reg::R8 => 72,
            Reg::Rax => 80,
            Reg::Rcx => 88,
            Reg::Rdx => 96,
            Reg::Rsi => 104,
            Reg::Rdi => 112,
            Reg::Rip => 128,
            Reg::Rsp => 152,
        }
    }

    /// The register an AT&T name (without `%`) denotes, and whether it is a high-byte
    /// register (`ah bh ch dh`: bits 8-15).
    pub fn from_name(name: &str) -> Option<(Reg, bool)> {
        const LEGACY: [(&str, Reg); 8] = [
            ("ax", Reg::Rax),
            ("bx", Reg::Rbx),
            ("cx", Reg::Rcx),
            ("dx", Reg::Rdx),
            ("si", Reg::Rsi),
            ("di", Reg::Rdi),
            ("bp", Reg::Rbp),
            ("sp", Reg::Rsp),
        ];
        const NUMBERED: [Reg; 8] = [
            Reg::R8,
            Reg::R9,
            Reg::R10,
            Reg::R11,
            Reg::R12,
            Reg::R13,
            Reg::R14,
            Reg::R15,
        ];
        match name {
            "rip" | "eip" => return Some((Reg::Rip, false)),
            "ah" => return Some((Reg::Rax, true)),
            "bh" => return Some((Reg::Rbx, true)),
            "ch" => return Some((Reg::Rcx, true)),
            "dh" => return Some((Reg::Rdx, true)),
            "al" => return Some((Reg::Rax, false)),
            "bl" => return Some((Reg::Rbx, false)),
            "cl" => return Some((Reg::Rcx, false)),
            "dl" => return Some((Reg::Rdx, false)),
            _ => {}
        }
        for (base, reg) in LEGACY {
            // ax eax rax; si esi rsi sil; ...
            let stem = name
                .strip_prefix('r')
                .or_else(|| name.strip_prefix('e'))
                .unwrap_or(name);
            if stem == base || (name.len() == 3 && name == format!("{base}l")) {
                return Some((reg, false));
            }
        }
        let rest = name.strip_prefix('r')?;
        let digits = rest.trim_end_matches(['d', 'w', 'b', 'l']);
        if rest.len() - digits.len() > 1 {
            return None;
        }
        let n: usize = digits.parse().ok()?;
        (8..16).contains(&n).then(|| (NUMBERED[n - 8], false))
    }

    /// The 64-bit name.
    pub fn name(self) -> &'static str {
        match self {
            Reg::Rax => "rax",
            Reg::Rbx => "rbx",
            Reg::Rcx => "rcx",
            Reg::Rdx => "rdx",
            Reg::Rsi => "rsi",
            Reg::Rdi => "rdi",
            Reg::Rbp => "rbp",
            Reg::Rsp => "rsp",
            Reg::R8 => "r8",
            Reg::R9 => "r9",
            Reg::R10 => "r10",
            Reg::R11 => "r11",
            Reg::R12 => "r12",
            Reg::R13 => "r13",
            Reg::R14 => "r14",
            Reg::R15 => "r15",
            Reg::Rip => "rip",
        }
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.name())
    }
}

/// Where an argument's value is at the probe site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgLocation {
    /// In a register (`high_byte`: bits 8-15 of it, for `%ah %bh %ch %dh`).
    Register { reg: Reg, high_byte: bool },
    /// In memory at `base + index * scale + offset` (`8(%rbp)`, `-4(%rax,%rdx,4)`), plus
    /// the address of `symbol` if the displacement names one (`sym+8(%rax)`, rare).
    Memory {
        base: Option<Reg>,
        index: Option<Reg>,
        scale: u8,
        offset: i64,
        symbol: Option<String>,
    },
    /// The constant itself (`$42`).
    Immediate(i64),
    /// In memory at `symbol + offset`, addressed relative to `rip` (`counter+4(%rip)`):
    /// position-independent code. `address` is the link-time address of `symbol + offset`
    /// when the binary's symbol table names it; at run time the data is at
    /// `address - probe.pc + (address of the probe site in the process)`.
    RipRelative {
        symbol: String,
        offset: i64,
        address: Option<u64>,
    },
    /// In memory at the absolute address of `symbol + offset` (`counter`, non-PIC code);
    /// `address` as for [`ArgLocation::RipRelative`].
    Absolute {
        symbol: String,
        offset: i64,
        address: Option<u64>,
    },
}

/// One argument of a probe site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtArg {
    /// Size in bytes: 1, 2, 4 or 8.
    pub size: u8,
    /// Sign-extend (`-N@`) rather than zero-extend.
    pub signed: bool,
    /// A floating-point value (`Nf@`, newer `sys/sdt.h`).
    pub float: bool,
    pub location: ArgLocation,
}

/// An argument spec that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgSpecError {
    /// The offending argument (or the whole spec).
    pub arg: String,
    pub reason: String,
}

impl fmt::Display for ArgSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad USDT argument {:?}: {}", self.arg, self.reason)
    }
}

impl std::error::Error for ArgSpecError {}

/// Parses a whole argument string (`"-4@%edi 8@%rsi"`; empty for no arguments).
pub fn parse_arg_spec(spec: &str) -> Result<Vec<UsdtArg>, ArgSpecError> {
    spec.split_ascii_whitespace().map(parse_arg).collect()
}

/// Parses one argument (`"-4@8(%rbp)"`). Specs without a size (very old `sys/sdt.h`) are
/// taken as signed 8-byte values.
pub fn parse_arg(arg: &str) -> Result<UsdtArg, ArgSpecError> {
    let err = |reason: &str| ArgSpecError {
        arg: arg.to_string(),
        reason: reason.to_string(),
    };
    let (size, signed, float, operand) = match arg.split_once('@') {
        Some((n, operand)) => {
            let (signed, n) = match n.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, n),
            };
            let (float, n) = match n.strip_suffix('f') {
                Some(n) => (true, n),
                None => (false, n),
            };
            let size: u8 = n.parse().map_err(|_| err("bad size"))?;
            if ![1, 2, 4, 8].contains(&size) {
                return Err(err("size is not 1, 2, 4 or 8"));
            }
            (size, signed, float, operand)
        }
        None => (8, true, false, arg),
    };
    let location = parse_operand(operand).map_err(|reason| err(&reason))?;
    Ok(UsdtArg {
        size,
        signed,
        float,
        location,
    })
}

fn parse_reg(text: &str) -> Result<(Reg, bool), String> {
    let name = text
        .strip_prefix('%')
        .ok_or_else(|| format!("expected a register, found {text:?}"))?;
    Reg::from_name(name).ok_or_else(|| format!("unknown register %{name}"))
}

fn parse_int(text: &str) -> Result<i64, String> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16)
    } else {
        digits.parse::<u64>()
    }
    .map_err(|_| format!("bad number {text:?}"))? as i64;
    Ok(if neg { value.wrapping_neg() } else { value })
}

/// A displacement: a number, a symbol, or `symbol+number` / `symbol-number`.
fn parse_displacement(text: &str) -> Result<(Option<String>, i64), String> {
    if text.is_empty() {
        return Ok((None, 0));
    }
    let starts_symbol = |c: char| c.is_ascii_alphabetic() || c == '_' || c == '.';
    if !text.starts_with(starts_symbol) {
        return Ok((None, parse_int(text)?));
    }
    match text[1..].find(['+', '-']) {
        Some(i) => Ok((Some(text[..i + 1].to_string()), parse_int(&text[i + 1..])?)),
        None => Ok((Some(text.to_string()), 0)),
    }
}

fn parse_operand(op: &str) -> Result<ArgLocation, String> {
    if op.starts_with('%') {
        let (reg, high_byte) = parse_reg(op)?;
        return Ok(ArgLocation::Register { reg, high_byte });
    }
    if let Some(imm) = op.strip_prefix('$') {
        return parse_int(imm).map(ArgLocation::Immediate);
    }
    let Some(open) = op.find('(') else {
        let (symbol, offset) = parse_displacement(op)?;
        return match symbol {
            Some(symbol) => Ok(ArgLocation::Absolute {
                symbol,
                offset,
                address: None,
            }),
            None => Err(format!("bad operand {op:?}")),
        };
    };
    let inner = op[open + 1..]
        .strip_suffix(')')
        .ok_or_else(|| format!("unbalanced parentheses in {op:?}"))?;
    let (symbol, offset) = parse_displacement(&op[..open])?;
    let mut parts = inner.split(',').map(str::trim);
    let base = match parts.next() {
        Some("") | None => None,
        Some(b) => Some(parse_reg(b)?.0),
    };
    let index = match parts.next() {
        Some("") | None => None,
        Some(i) => Some(parse_reg(i)?.0),
    };
    let scale = match parts.next() {
        None | Some("") => 1,
        Some(s) => match s.parse::<u8>() {
            Ok(s @ (1 | 2 | 4 | 8)) => s,
            _ => return Err(format!("bad scale {s:?}")),
        },
    };
    if parts.next().is_some() {
        return Err(format!("bad memory operand {op:?}"));
    }
    if base == Some(Reg::Rip) {
        if index.is_some() {
            return Err(format!("bad rip-relative operand {op:?}"));
        }
        return Ok(match symbol {
            Some(symbol) => ArgLocation::RipRelative {
                symbol,
                offset,
                address: None,
            },
            // A bare displacement from rip: no symbol to resolve.
            None => ArgLocation::Memory {
                base,
                index,
                scale,
                offset,
                symbol: None,
            },
        });
    }
    if base.is_none() && index.is_none() {
        return Err(format!("memory operand without registers {op:?}"));
    }
    Ok(ArgLocation::Memory {
        base,
        index,
        scale,
        offset,
        symbol,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(reg: Reg) -> ArgLocation {
        ArgLocation::Register {
            reg,
            high_byte: false,
        }
    }

    #[test]
    fn register_names_of_every_width() {
        for (name, r, high) in [
            ("rax", Reg::Rax, false),
            ("eax", Reg::Rax, false),
            ("ax", Reg::Rax, false),
            ("al", Reg::Rax, false),
            ("ah", Reg::Rax, true),
            ("dh", Reg::Rdx, true),
            ("bl", Reg::Rbx, false),
            ("esi", Reg::Rsi, false),
            ("si", Reg::Rsi, false),
            ("sil", Reg::Rsi, false),
            ("dil", Reg::Rdi, false),
            ("bpl", Reg::Rbp, false),
            ("spl", Reg::Rsp, false),
            ("esp", Reg::Rsp, false),
            ("r8", Reg::R8, false),
            ("r8d", Reg::R8, false),
            ("r9w", Reg::R9, false),
            ("r10b", Reg::R10, false),
            ("r11l", Reg::R11, false),
            ("r15d", Reg::R15, false),
            ("rip", Reg::Rip, false),
        ] {
            assert_eq!(Reg::from_name(name), Some((r, high)), "{name}");
        }
        for bad in ["r7", "r16", "r8q", "r8dd", "xmm0", "e", "rr", ""] {
            assert_eq!(Reg::from_name(bad), None, "{bad}");
        }
        assert_eq!(Reg::Rdi.pt_regs_offset(), 112);
        assert_eq!(Reg::Rip.to_string(), "%rip");
    }

    #[test]
    fn operands() {
        let a = parse_arg_spec("-4@%edi 8@%rsi 1@%ah").unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(
            (a[0].size, a[0].signed, &a[0].location),
            (4, true, &reg(Reg::Rdi))
        );
        assert_eq!(
            (a[1].size, a[1].signed, &a[1].location),
            (8, false, &reg(Reg::Rsi))
        );
        assert_eq!(
            a[2].location,
            ArgLocation::Register {
                reg: Reg::Rax,
                high_byte: true
            }
        );
        let loc = |s: &str| parse_arg(s).unwrap().location;
        assert_eq!(loc("-4@$42"), ArgLocation::Immediate(42));
        assert_eq!(loc("8@$-0x10"), ArgLocation::Immediate(-16));
        assert_eq!(
            loc("-4@-20(%rbp)"),
            ArgLocation::Memory {
                base: Some(Reg::Rbp),
                index: None,
                scale: 1,
                offset: -20,
                symbol: None
            }
        );
        assert_eq!(
            loc("2@8(%rax,%rdx,4)"),
            ArgLocation::Memory {
                base: Some(Reg::Rax),
                index: Some(Reg::Rdx),
                scale: 4,
                offset: 8,
                symbol: None
            }
        );
        assert_eq!(
            loc("8@(,%r9,8)"),
            ArgLocation::Memory {
                base: None,
                index: Some(Reg::R9),
                scale: 8,
                offset: 0,
                symbol: None
            }
        );
        assert_eq!(
            loc("-4@counter(%rip)"),
            ArgLocation::RipRelative {
                symbol: "counter".into(),
                offset: 0,
                address: None
            }
        );
        assert_eq!(
            loc("4@table+12(%rip)"),
            ArgLocation::RipRelative {
                symbol: "table".into(),
                offset: 12,
                address: None
            }
        );
        assert_eq!(
            loc("8@_ZN3foo3BAR17h0E-8"),
            ArgLocation::Absolute {
                symbol: "_ZN3foo3BAR17h0E".into(),
                offset: -8,
                address: None
            }
        );
        let f = parse_arg("-8f@%rax").unwrap();
        assert!(f.float && f.signed && f.size == 8);
        // No size: a signed 8-byte value.
        assert_eq!(parse_arg("%eax").unwrap().size, 8);
        assert_eq!(parse_arg_spec("").unwrap(), vec![]);
    }

    #[test]
    fn bad_specs_are_errors() {
        for bad in [
            "3@%eax",
            "x@%eax",
            "4@%xmm0",
            "4@$zz",
            "4@8(%rax",
            "4@8(%rax,%rbx,3)",
            "4@()",
            "4@12",
            "4@8(%rip,%rax)",
            "4@1(%rax,%rbx,2,3)",
        ] {
            let err = parse_arg(bad).unwrap_err();
            assert_eq!(err.arg, bad);
            assert!(!err.to_string().is_empty());
        }
    }
}
