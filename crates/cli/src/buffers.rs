//! The sizes of the kernel's buffers, from the `bufsize`, `aggsize` and `dynvarsize`
//! options: the ring buffer (a power of two of at least a page, 1 MiB under
//! `bufpolicy=ring`, at most 1 GiB), the most keys of an aggregation's map (one per 128
//! bytes: the kernel preallocates per-CPU maps, at a cost in start-up time per entry;
//! within them aggregations share the space as DTrace 2 counts it, backend
//! `codegen/aggspace.rs`) and the dynamic variable maps' entries (64 bytes each), between
//! 1,024 and 1,048,576 entries.
//!
//! Before tracing starts, each buffer must hold at least one of what goes in it, as in
//! DTrace ([`enabling_fits`]): the principal buffer the largest record's data, the
//! aggregation and dynamic variable space one entry of the largest key and value (counted
//! as DTrace counts them, `dtrace_backend::space`).
//!
//! A size larger than what can be made is handled as DTrace's `bufresize` option says:
//! under `auto` (the default) it is lowered and `dtrace` says so, as DTrace does ("buffer
//! size lowered to 1g"; `quietresize` silences it); under `manual` tracing is refused.

use dtrace_backend::program::Compiled;
use dtrace_consumer::policy::BufPolicy;

use crate::compile::Compilation;
use crate::options::{BufResize, Options};

/// The largest ring buffer.
const MAX_RING: u64 = 1 << 30;
/// Bytes an aggregation entry and a dynamic variable entry stand for in the options.
const AGG_ENTRY: u64 = 128;
const DYNVAR_ENTRY: u64 = 64;
/// The fewest and most entries of an aggregation or dynamic variable map.
const MIN_ENTRIES: u64 = 1 << 10;
const MAX_ENTRIES: u64 = 1 << 20;

/// The smallest ring buffer under `bufpolicy=ring`, whose reader looks every few
/// milliseconds instead of being woken for each record: there `bufsize` is what each CPU
/// keeps, not what the buffer must hold between two reads.
const MIN_RING_POLICY: u64 = 1 << 20;

/// The ring buffer's size in bytes.
pub fn ring_size(options: &Options) -> u32 {
    let least = match options.bufpolicy {
        BufPolicy::Ring => MIN_RING_POLICY,
        _ => 4096,
    };
    options.bufsize.clamp(least, MAX_RING).next_power_of_two() as u32
}

/// The ring buffer of a program whose probes each fire at most once
/// ([`dtrace_backend::program::Compiled::one_shot_output`]): big enough for all it can
/// ever send, if that is less than the options' size, which it could then never fill (the
/// kernel makes and maps a 4 MiB ring in about as long as the rest of start-up takes).
/// Tracing behaves as with the full size: no record the full ring would have kept is
/// dropped. A pinned ring (`-x ringpin`), which others read, keeps the size asked for, as
/// does a program that may gain probes while tracing ([`Compilation::deferred`]).
pub fn fit_ring(comp: &mut Compilation, options: &Options) {
    let compiled = &mut comp.compiled;
    let Some(most) = compiled.one_shot_output else {
        return;
    };
    if options.ringpin.is_some() || !comp.deferred.is_empty() {
        return;
    }
    let ring = &mut compiled.maps[compiled.core.ringbuf.0];
    let fits = most.clamp(4096, MAX_RING).next_power_of_two() as u32;
    ring.max_entries = ring.max_entries.min(fits);
}

/// Unread bytes in the ring buffer past which a record wakes the consumer before its next
/// read (`backend/src/codegen/wakeup.rs`): half of what the programs may fill. A pinned
/// ring (`-x ringpin`) keeps half the buffer read but unfreed, so half of the other half.
pub fn wakeup_at(options: &Options) -> u32 {
    let size = ring_size(options);
    match options.ringpin {
        Some(_) => size / 2 + size / 4,
        None => size / 2,
    }
}

/// The most entries of each aggregation's map.
pub fn agg_entries(options: &Options) -> u32 {
    (options.aggsize / AGG_ENTRY).clamp(MIN_ENTRIES, MAX_ENTRIES) as u32
}

/// The entries of each dynamic variable's map.
pub fn dynvar_entries(options: &Options) -> u32 {
    (options.dynvarsize / DYNVAR_ENTRY).clamp(MIN_ENTRIES, MAX_ENTRIES) as u32
}

/// Why `compiled` cannot be enabled with the buffers `options` size, as DTrace says it.
pub fn enabling_fits(options: &Options, compiled: &Compiled) -> Result<(), &'static str> {
    // A buffer that fills up keeps room for END's records: one END could not fill.
    let end = u64::from(compiled.max_end_record_data);
    if options.bufpolicy == BufPolicy::Fill && options.bufsize < end {
        return Err("END enablings exceed size of principal buffer");
    }
    // The trace buffer must hold the largest record's data (what bufsize counts, as the
    // buffer policies do).
    let largest = u64::from(compiled.max_record_data);
    let space = &compiled.space;
    if options.bufsize == 0
        || options.bufsize < largest
        || space.entries(options.aggsize, space.aggdata) == Some(0)
        || space.entries(options.dynvarsize, space.dynvar) == Some(0)
    {
        return Err("Enabling exceeds size of buffer");
    }
    Ok(())
}

/// What to say of sizes that could not be honoured: the notices (without `dtrace: `) of
/// those lowered under `bufresize=auto`; under `manual`, why tracing cannot start.
pub fn lowered(options: &Options) -> Result<Vec<String>, String> {
    let sizes = [
        ("buffer size", options.bufsize, MAX_RING),
        ("aggregation size", options.aggsize, MAX_ENTRIES * AGG_ENTRY),
        (
            "dynamic variable size",
            options.dynvarsize,
            MAX_ENTRIES * DYNVAR_ENTRY,
        ),
    ];
    let mut notices = Vec::new();
    for (name, asked, most) in sizes {
        if asked <= most {
            continue;
        }
        match options.bufresize {
            BufResize::Manual => {
                return Err(format!(
                    "dtrace: could not enable tracing: {name} {} is more than the largest possible, {} (bufresize=manual)\n",
                    size_text(asked),
                    size_text(most)
                ))
            }
            BufResize::Auto if !options.quietresize => {
                notices.push(format!("{name} lowered to {}", size_text(most)));
            }
            BufResize::Auto => {}
        }
    }
    Ok(notices)
}

/// A size as DTrace prints it: with the largest unit (`k m g t p e`) that divides it
/// exactly, else in bytes.
fn size_text(bytes: u64) -> String {
    let mut unit = 0;
    while unit < 6 && bytes >> (10 * (unit + 1)) != 0 {
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} bytes"),
        _ if bytes % (1 << (10 * unit)) != 0 => format!("{bytes} bytes"),
        _ => format!("{}{}", bytes >> (10 * unit), b" kmgtpe"[unit] as char),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_printed_as_dtrace_prints_them() {
        assert_eq!(size_text(1 << 30), "1g");
        assert_eq!(size_text(10 << 30), "10g");
        assert_eq!(size_text(128 << 20), "128m");
        assert_eq!(size_text(3 << 40), "3t");
        assert_eq!(size_text((1 << 30) + 1), "1073741825 bytes");
        assert_eq!(size_text(1000), "1000 bytes");
    }

    #[test]
    fn sizes_beyond_the_largest_are_lowered_or_refused() {
        let mut options = Options::default();
        assert_eq!(lowered(&options), Ok(vec![]));
        options.set("bufsize", Some("10g")).unwrap();
        options.set("aggsize", Some("1g")).unwrap();
        assert_eq!(
            lowered(&options),
            Ok(vec![
                "buffer size lowered to 1g".to_string(),
                "aggregation size lowered to 128m".to_string()
            ])
        );
        assert_eq!(ring_size(&options), 1 << 30);
        options.set("bufsize", Some("64")).unwrap();
        assert_eq!(ring_size(&options), 4096);
        assert_eq!(wakeup_at(&options), 2048);
        options.set("bufpolicy", Some("ring")).unwrap();
        assert_eq!(ring_size(&options), 1 << 20);
        assert_eq!(wakeup_at(&options), 1 << 19);
        options.set("ringpin", Some("pinned")).unwrap();
        assert_eq!(wakeup_at(&options), 3 << 18);
        options.set("bufsize", Some("10g")).unwrap();
        assert_eq!(agg_entries(&options), 1 << 20);
        options.set("quietresize", None).unwrap();
        assert_eq!(lowered(&options), Ok(vec![]));
        options.set("bufresize", Some("manual")).unwrap();
        assert_eq!(
            lowered(&options),
            Err("dtrace: could not enable tracing: buffer size 10g is more than the largest possible, 1g (bufresize=manual)\n".to_string())
        );
        assert!(options.set("bufresize", Some("sometimes")).is_err());
    }
}
