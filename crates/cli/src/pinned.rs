//! A ring that outlives `dtrace` (`-x ringpin[=NAME]` with `-x bufpolicy=ring`): the one
//! kernel object `dtrace` leaves behind, and only when asked.
//!
//! While tracing, two maps are pinned in `/sys/fs/bpf/dtrace/NAME/` (the BPF file system is
//! mounted if it is not): `ring`, the run's BPF ring buffer itself, and `desc`, an array of
//! 4 KiB chunks holding what a later `dtrace` needs to decode it (the program description,
//! `bufsize`, `quiet`, the pids of `dtrace` and of its target). No program or link is
//! pinned: when `dtrace` dies they go, and the maps stay with what the programs wrote.
//! The session retains the newest records it read in the ring (half the buffer at most)
//! instead of freeing their space, so the map holds them and any record not read yet.
//!
//! A run that ends in order (`exit()`, the target's end, Ctrl-C, SIGTERM, an error) has
//! shown its records and removes the pin. After `SIGKILL`, `dtrace -x ringread[=NAME]`
//! prints the records as the run's rings would have (each CPU's latest within `bufsize`,
//! every CPU's together in the order they were recorded), then removes the pin;
//! `dtrace -x ringclear[=NAME]` removes it unread. A pin lasts until one of them or a reboot.

use std::path::{Path, PathBuf};

use dtrace_abi::desc::ProgramDesc;
use dtrace_consumer::policy::BufPolicy;
use dtrace_consumer::{AggregationMaps, Consumer, EntryVisitor, Output, Settings};
use dtrace_runtime::{Map, MapSpec, MapType, RingBuf, Update};

/// The name a bare `-x ringpin` (`ringread`, `ringclear`) uses.
pub const DEFAULT_NAME: &str = "default";
/// The description map's value size.
const CHUNK: usize = 4096;
/// The first bytes of the description map, naming its layout's version.
const MAGIC: &[u8; 8] = b"dtpin001";

/// The pin name an option's value gives (`None`: bad characters).
pub fn name(value: Option<&str>) -> Option<String> {
    let name = value.filter(|v| !v.is_empty()).unwrap_or(DEFAULT_NAME);
    let good = name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    good.then(|| name.to_string())
}

/// What a later `dtrace` needs to know of the run beside its records.
pub struct RunInfo {
    pub bufsize: u64,
    pub quiet: bool,
    pub dtrace_pid: u32,
    pub target_pid: u32,
}

/// The directory of pin `name`, without mounting anything.
fn dir_of(name: &str) -> PathBuf {
    Path::new(dtrace_runtime::pin::BPFFS)
        .join("dtrace")
        .join(name)
}

/// A ring pinned by this run; the pin is removed when it is dropped.
pub struct Pin {
    dir: PathBuf,
    info: RunInfo,
}

impl Pin {
    /// Pin `ring` and the description of the run as `name`.
    pub fn create(
        name: &str,
        ring: &Map,
        desc: &ProgramDesc,
        info: RunInfo,
    ) -> Result<Pin, String> {
        let fail = |why: String| format!("dtrace: failed to pin the ring as '{name}': {why}\n");
        let root = dtrace_runtime::pin::ensure_bpffs().map_err(|e| fail(e.to_string()))?;
        let parent = root.join("dtrace");
        let dir = parent.join(name);
        // Another dtrace removing the last pin may remove `parent` between the two calls.
        let mut made = Err(std::io::ErrorKind::NotFound.into());
        for _ in 0..3 {
            std::fs::create_dir_all(&parent).map_err(|e| fail(crate::errno_text(&e)))?;
            made = std::fs::create_dir(&dir);
            if !matches!(&made, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
                break;
            }
        }
        if let Err(e) = made {
            return Err(fail(if e.kind() == std::io::ErrorKind::AlreadyExists {
                format!(
                    "a ring is pinned there already (read it with -x ringread={name}, or \
                     remove it with -x ringclear={name})"
                )
            } else {
                crate::errno_text(&e)
            }));
        }
        let pin = Pin { dir, info };
        ring.pin(&pin.dir.join("ring"))
            .and_then(|()| desc_map(desc, &pin.info)?.pin(&pin.dir.join("desc")))
            .map_err(|e| fail(e.to_string()))?;
        Ok(pin)
    }

    /// Pin `desc` in place of the description: probes were added while tracing.
    pub fn update_desc(&self, desc: &ProgramDesc) -> Result<(), String> {
        let path = self.dir.join("desc");
        let _ = std::fs::remove_file(&path);
        desc_map(desc, &self.info)
            .and_then(|map| map.pin(&path))
            .map_err(|e| format!("failed to pin the ring's new description: {e}"))
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        remove(&self.dir);
    }
}

/// Remove the pin in `dir` (and `/sys/fs/bpf/dtrace` once no pin is left in it).
fn remove(dir: &Path) {
    for file in ["ring", "desc"] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    let _ = std::fs::remove_dir(dir);
    if let Some(parent) = dir.parent() {
        let _ = std::fs::remove_dir(parent);
    }
}

/// The description map: the magic, the run's information and the encoded program
/// description, after their length, cut into [`CHUNK`]-byte elements.
fn desc_map(desc: &ProgramDesc, info: &RunInfo) -> dtrace_runtime::Result<Map> {
    let mut blob = MAGIC.to_vec();
    blob.extend(info.bufsize.to_le_bytes());
    blob.push(u8::from(info.quiet));
    blob.extend(info.dtrace_pid.to_le_bytes());
    blob.extend(info.target_pid.to_le_bytes());
    blob.extend(dtrace_abi::wire::encode(desc));
    let mut bytes = (blob.len() as u64).to_le_bytes().to_vec();
    bytes.extend(blob);
    let chunks = bytes.len().div_ceil(CHUNK);
    let map = Map::create(&MapSpec {
        map_type: MapType::Array,
        key_size: 4,
        value_size: CHUNK as u32,
        max_entries: chunks as u32,
        flags: 0,
        name: "dtrace_pin_desc".into(),
    })?;
    for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
        let mut value = chunk.to_vec();
        value.resize(CHUNK, 0);
        map.update(&(i as u32).to_ne_bytes(), &value, Update::Any)?;
    }
    Ok(map)
}

/// The run's information and description from the description map (`None`: not ours).
fn read_desc(map: &Map) -> Option<(RunInfo, ProgramDesc)> {
    let mut bytes = Vec::new();
    for i in 0..map.spec().max_entries {
        bytes.extend(map.lookup(&i.to_ne_bytes()).ok()??);
    }
    let len = usize::try_from(dtrace_abi::u64_at(&bytes, 0)).ok()?;
    let blob = bytes.get(8..8usize.checked_add(len)?)?;
    let rest = blob.strip_prefix(MAGIC.as_slice())?;
    let info = RunInfo {
        bufsize: dtrace_abi::u64_at(rest, 0),
        quiet: *rest.get(8)? != 0,
        dtrace_pid: dtrace_abi::u32_at(rest, 9),
        target_pid: dtrace_abi::u32_at(rest, 13),
    };
    let desc = dtrace_abi::wire::decode(rest.get(17..)?)?;
    Some((info, desc))
}

/// A ring read back has no aggregations: their maps went with the run.
struct NoAggregations;

impl AggregationMaps for NoAggregations {
    fn entries(&self, _agg: usize, _each: &mut EntryVisitor) {}
    fn keys(&self, _agg: usize) -> Vec<Vec<u8>> {
        Vec::new()
    }
    fn clear(&self, _agg: usize) {}
    fn remove(&self, _agg: usize, _keys: &[&[u8]]) {}
}

/// `dtrace -x ringread=NAME`: print the records of pin `name` to `output`, then remove it.
/// Returns the exit status.
pub fn read(name: &str, mut settings: Settings, output: impl FnOnce() -> Box<dyn Output>) -> i32 {
    let dir = dir_of(name);
    let opened = Map::from_pinned(&dir.join("desc")).and_then(|desc| {
        let ring = Map::from_pinned(&dir.join("ring"))?;
        Ok((desc, ring))
    });
    let (desc_map, ring_map) = match opened {
        Ok(maps) => maps,
        Err(_) if !dir.exists() => {
            eprintln!("dtrace: no ring is pinned as '{name}' ({})", dir.display());
            return 1;
        }
        Err(e) => {
            eprintln!("dtrace: failed to read the ring pinned as '{name}': {e}");
            return 1;
        }
    };
    let Some((info, desc)) = read_desc(&desc_map) else {
        eprintln!(
            "dtrace: the ring pinned as '{name}' was not pinned by this version of dtrace \
             (remove it with -x ringclear={name})"
        );
        return 1;
    };
    let mut ring = match RingBuf::new(&ring_map) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("dtrace: failed to read the ring pinned as '{name}': {e}");
            return 1;
        }
    };
    settings.quiet |= info.quiet;
    let mut consumer = Consumer::new(desc, settings, output());
    consumer.set_buffers(BufPolicy::Ring, info.bufsize);
    let mut records = Vec::new();
    ring.consume(|r| records.push(r.to_vec()));
    for r in &records {
        consumer.record(r, &NoAggregations);
    }
    consumer.kept_records(&NoAggregations);
    remove(&dir);
    let target = match info.target_pid {
        0 => String::new(),
        pid => format!(", tracing pid {pid}"),
    };
    eprintln!(
        "dtrace: read the ring pinned as '{name}' by dtrace pid {}{target}; removed {}",
        info.dtrace_pid,
        dir.display()
    );
    0
}

/// `dtrace -x ringclear=NAME`: remove pin `name` unread. Returns the exit status.
pub fn clear(name: &str) -> i32 {
    let dir = dir_of(name);
    if !dir.exists() {
        eprintln!("dtrace: no ring is pinned as '{name}' ({})", dir.display());
        return 1;
    }
    remove(&dir);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_file_names() {
        assert_eq!(name(None).as_deref(), Some("default"));
        assert_eq!(name(Some("")).as_deref(), Some("default"));
        assert_eq!(
            name(Some("app-1.crash_2")).as_deref(),
            Some("app-1.crash_2")
        );
        assert_eq!(name(Some("../x")), None);
        assert_eq!(name(Some(".hidden")), None);
        assert_eq!(name(Some("a/b")), None);
    }

    #[test]
    fn the_description_map_reads_back() {
        let desc = ProgramDesc {
            probes: Vec::new(),
            aggregations: Vec::new(),
        };
        let info = RunInfo {
            bufsize: 64,
            quiet: true,
            dtrace_pid: 7,
            target_pid: 9,
        };
        let map = desc_map(&desc, &info).unwrap();
        let (back, back_desc) = read_desc(&map).unwrap();
        assert_eq!(
            (back.bufsize, back.quiet, back.dtrace_pid, back.target_pid),
            (64, true, 7, 9)
        );
        assert_eq!(back_desc, desc);
    }
}
