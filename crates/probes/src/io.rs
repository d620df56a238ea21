//! The `io` provider: block I/O, as DTrace's `io` probes, mapped onto Linux's BTF raw
//! tracepoints (see [`crate::mapped`]); arguments are translated by the D library
//! (`bufinfo_t`, `devinfo_t`, `fileinfo_t` in `io.d`).
//!
//! Linux's unit of block I/O is the `struct bio`, and the probes see I/O at that level, as
//! Oracle Linux DTrace's do:
//!
//! | probe | fires on | `args[0]`, `args[1]` from |
//! |---|---|---|
//! | `start` | `block_bio_queue`: a bio submitted to a block device | that bio |
//! | `done` | `block_rq_complete`: a request's data completed (requests without data, flushes, skipped) | the request's first bio |
//!
//! `start` fires in the thread that submits the I/O (the writer of an `O_DIRECT` write,
//! the flusher thread for written-back pages), so `execname` and `pid` say who asked for
//! it, which the request-level `block_rq_issue` would not (it often runs in a kernel
//! worker); its bio has the size and sector the file system asked for, before merging.
//! `done` fires where the device's completion is handled (often an interrupt), with the
//! first bio of the completed request, so `arg0` (the bio's address) and
//! `args[0]->b_blkno` are those `start` saw for it; the bios merged behind it into one
//! request have no `done` of their own. I/O of devices that take bios without requests
//! (device mapper, md) has `start` on each layer and `done` on the bottom one only.
//!
//! `args[2]`, a `fileinfo_t`, is translated from the bio too: the file whose page cache
//! holds its first page (buffered I/O: name, offset and file system; the mount it was
//! reached by is not known, so no path), or no file ("<none>": `O_DIRECT` buffers are the
//! program's memory, metadata the block device's own cache). `wait-start` and `wait-done` (at
//! `submit_bio_wait()` in DTrace) have no tracepoint, so no probe: the catalog says so
//! when a description names them.

use crate::mapped::{Base, Def, Missing};
use crate::Probe;

/// The provider's name.
pub const PROVIDER: &str = "io";

/// The arguments of every probe, over a `struct bio *` expression.
macro_rules! io_args {
    ($bio:literal) => {
        &[
            ("bufinfo_t *", concat!("xlate <bufinfo_t *> (", $bio, ")")),
            ("devinfo_t *", concat!("xlate <devinfo_t *> (", $bio, ")")),
            ("fileinfo_t *", concat!("xlate <fileinfo_t *> (", $bio, ")")),
        ]
    };
}

const DEFS: &[Def] = &[
    Def {
        name: "done",
        base: Base::Raw("block_rq_complete"),
        filter: Some("args[0]->bio != NULL"),
        fewer_args: None,
        args: io_args!("args[0]->bio"),
    },
    Def {
        name: "start",
        base: Base::Raw("block_bio_queue"),
        filter: None,
        fewer_args: None,
        args: io_args!("args[0]"),
    },
];

/// The probes DTrace has that no tracepoint stands for.
const WITHOUT_TRACEPOINT: &[&str] = &["wait-done", "wait-start"];

/// The `io` probes this kernel can supply, numbered from `first_id`.
pub fn probes(first_id: u32) -> Vec<Probe> {
    crate::mapped::probes(PROVIDER, DEFS, first_id)
}

/// The probes this kernel cannot have.
pub fn missing() -> Vec<Missing> {
    let mut missing = crate::mapped::missing(PROVIDER, DEFS);
    missing.extend(WITHOUT_TRACEPOINT.iter().map(|&name| Missing {
        provider: PROVIDER,
        name,
        why: "fires in submit_bio_wait(), where Linux has no tracepoint, so this io provider has no such probe (fbt::submit_bio_wait: comes closest, where the kernel allows fbt)".to_string(),
    }));
    missing
}
