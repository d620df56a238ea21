//! The options that shape output rather than tracing — quiet mode, the aggregation sort
//! options and drop tags — and the value syntax every option shares (flags and numbers), so that `-x`,
//! `#pragma D option` and `setopt()` set them alike.

use crate::aggregate::SortOptions;

/// DTrace's reason for a value an option does not take.
pub const INVALID_VALUE: &str = "Invalid value for specified option";

/// Output settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// `quiet` (`-q`): only explicitly traced data is shown.
    pub quiet: bool,
    /// `aggsortkey`, `aggsortrev`, `aggsortpos`, `aggsortkeypos`.
    pub sort: SortOptions,
    /// `droptags`: drop messages start with their kind's tag (`[DTRACEDROP_DYNAMIC]`).
    pub droptags: bool,
    /// `flowindent` (`-F`): each firing shows its function indented by call depth.
    pub flowindent: bool,
    /// `rawbytes`: `trace()` shows every value as a hex dump of its bytes.
    pub rawbytes: bool,
    /// `printsize`: the most bytes of an object `print()` shows (all when unset).
    pub printsize: Option<u32>,
    /// `noresolve`: user addresses are shown as `object:0xoffset`, not resolved to symbols.
    pub noresolve: bool,
    /// `aggpercpu`: aggregations printed in the default layout show each CPU's value under
    /// the merged one.
    pub aggpercpu: bool,
    /// `stackindent`: the columns each stack frame is indented by (DTrace's 14 when unset).
    pub stack_indent: Option<usize>,
}

impl Settings {
    /// The columns a stack's frames are indented by.
    pub fn stack_indent(&self) -> usize {
        self.stack_indent.unwrap_or(crate::trace::STACK_INDENT)
    }

    /// Apply `name[=value]` if it is an output option: `Some` of the outcome (the error is
    /// DTrace's reason text); `None` for any other option.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Option<Result<(), String>> {
        let result = match name {
            "quiet" => flag(value).map(|v| self.quiet = v),
            "droptags" => flag(value).map(|v| self.droptags = v),
            "flowindent" => flag(value).map(|v| self.flowindent = v),
            "rawbytes" => flag(value).map(|v| self.rawbytes = v),
            "noresolve" => flag(value).map(|v| self.noresolve = v),
            "aggpercpu" => flag(value).map(|v| self.aggpercpu = v),
            "stackindent" => number(value).map(|v| self.stack_indent = Some(v as usize)),
            // As in DTrace: rounded up to 8 bytes; none, 0 or past 64 KiB is 8 KiB.
            "printsize" => number(value).map(|v| {
                let v = if v == 0 || v > 65536 { 8192 } else { v };
                self.printsize = Some(v.next_multiple_of(8) as u32);
            }),
            "aggsortkey" => flag(value).map(|v| self.sort.by_key = v),
            "aggsortrev" => flag(value).map(|v| self.sort.reverse = v),
            "aggsortpos" => number(value).map(|v| self.sort.position = v as usize),
            "aggsortkeypos" => number(value).map(|v| self.sort.key_position = v as usize),
            _ => return None,
        };
        Some(result)
    }
}

/// A flag option's value, as DTrace reads it: none, a word of yes (`yes`, `enable`,
/// `enabled`, `true`, `on`, `set`) or any non-negative number sets it; an empty value or a
/// word of no (`no`, `disable`, `disabled`, `false`, `off`, `unset`) clears it.
pub fn flag(value: Option<&str>) -> Result<bool, String> {
    const COUPLES: [(&str, &str); 6] = [
        ("yes", "no"),
        ("enable", "disable"),
        ("enabled", "disabled"),
        ("true", "false"),
        ("on", "off"),
        ("set", "unset"),
    ];
    let Some(v) = value else {
        return Ok(true);
    };
    if v.is_empty() {
        return Ok(false);
    }
    for (yes, no) in COUPLES {
        if v.eq_ignore_ascii_case(yes) {
            return Ok(true);
        }
        if v.eq_ignore_ascii_case(no) {
            return Ok(false);
        }
    }
    match parse_c_integer(v) {
        Some(_) => Ok(true),
        None => Err(INVALID_VALUE.into()),
    }
}

/// A non-negative integer written as C's `strtoull(.., 0)` reads it (decimal, `0x` hex,
/// leading-`0` octal).
fn parse_c_integer(v: &str) -> Option<u64> {
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if v.len() > 1 && v.starts_with('0') {
        u64::from_str_radix(&v[1..], 8).ok()
    } else {
        v.parse().ok()
    }
}

/// A numeric option's value.
pub fn number(value: Option<&str>) -> Result<u64, String> {
    value
        .and_then(parse_c_integer)
        .ok_or_else(|| INVALID_VALUE.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_options() {
        let mut s = Settings::default();
        assert_eq!(s.set("quiet", None), Some(Ok(())));
        assert!(s.quiet);
        assert_eq!(s.set("aggsortpos", Some("2")), Some(Ok(())));
        assert_eq!(s.sort.position, 2);
        assert_eq!(
            s.set("aggsortrev", Some("x")),
            Some(Err(INVALID_VALUE.into()))
        );
        assert_eq!(s.set("aggsortrev", Some("TRUE")), Some(Ok(())));
        assert!(s.sort.reverse);
        assert_eq!(s.set("aggsortrev", Some("off")), Some(Ok(())));
        assert!(!s.sort.reverse);
        assert_eq!(s.set("aggsortrev", Some("0x1")), Some(Ok(())));
        assert!(s.sort.reverse);
        assert_eq!(s.set("aggsortrev", Some("")), Some(Ok(())));
        assert!(!s.sort.reverse);
        assert_eq!(
            s.set("aggsortrev", Some("-1")),
            Some(Err(INVALID_VALUE.into()))
        );
        assert_eq!(s.set("bufsize", Some("4m")), None);
    }
}
