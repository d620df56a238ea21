//! BPF maps: creation, element access by byte slices, per-CPU values and key iteration.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use crate::btf_blob;
use crate::error::{Error, Result};
use crate::sys::{self, cmd, MapBatchAttr, MapCreateAttr, MapElemAttr};
use crate::{cpus, rlimit};

/// What [`Map::for_each_percpu`] hands each entry to: its key, and its value on each CPU.
pub type PercpuVisitor<'a> = dyn FnMut(&[u8], &[&[u8]]) + 'a;

/// Entries [`Map::for_each_percpu`] reads a system call.
pub const BATCH: usize = 4096;

/// The kernel's own "not supported" (`ENOTSUPP`, which user space has no name for): what
/// `BPF_MAP_LOOKUP_BATCH` says of a map type without batch operations.
const ENOTSUPP: i32 = 524;

/// The map types this crate creates (`enum bpf_map_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapType {
    Hash,
    Array,
    PerfEventArray,
    PercpuHash,
    PercpuArray,
    StackTrace,
    LruHash,
    /// An array whose elements are other maps (their file descriptors when written).
    ArrayOfMaps,
    RingBuf,
    /// Task local storage: a value per task, found through the task (`bpf_task_storage_get`)
    /// and freed by the kernel when the task exits. Keyed by a pid descriptor from user
    /// space; created with `max_entries` 0 and `BPF_F_NO_PREALLOC`.
    TaskStorage,
}

impl MapType {
    /// The kernel's number for this type.
    pub fn raw(self) -> u32 {
        match self {
            MapType::Hash => 1,
            MapType::Array => 2,
            MapType::PerfEventArray => 4,
            MapType::PercpuHash => 5,
            MapType::PercpuArray => 6,
            MapType::StackTrace => 7,
            MapType::LruHash => 9,
            MapType::ArrayOfMaps => 12,
            MapType::RingBuf => 27,
            MapType::TaskStorage => 29,
        }
    }

    /// True for types that keep one value per possible CPU.
    pub fn is_percpu(self) -> bool {
        matches!(self, MapType::PercpuHash | MapType::PercpuArray)
    }
}

/// How an update treats an existing element (`BPF_ANY`, `BPF_NOEXIST`, `BPF_EXIST`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Create or replace.
    Any,
    /// Create only; fails with `EEXIST` if the key is present.
    NoExist,
    /// Replace only; fails with `ENOENT` if the key is absent.
    Exist,
}

impl Update {
    fn raw(self) -> u64 {
        match self {
            Update::Any => 0,
            Update::NoExist => 1,
            Update::Exist => 2,
        }
    }
}

/// What to create: [`Map::create`]'s argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSpec {
    pub map_type: MapType,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    /// `map_flags` (e.g. `BPF_F_NO_PREALLOC` = 1 for hashes); usually 0.
    pub flags: u32,
    /// Shown by `bpftool`; sanitised and cut to 15 characters.
    pub name: String,
}

/// A BPF map, owned through its file descriptor (closed on drop).
#[derive(Debug)]
pub struct Map {
    fd: OwnedFd,
    spec: MapSpec,
    /// Possible CPUs, for per-CPU maps; 0 otherwise.
    ncpus: usize,
}

impl Map {
    /// Creates a map (`BPF_MAP_CREATE`).
    pub fn create(spec: &MapSpec) -> Result<Map> {
        rlimit::raise_memlock_once();
        let ncpus = if spec.map_type.is_percpu() {
            cpus::possible()?.len()
        } else {
            0
        };
        // Task local storage must say what its key and value are; the map keeps its own
        // reference to the BTF object, so ours is closed once it exists.
        let btf = match spec.map_type {
            MapType::TaskStorage => Some(
                btf_blob::load(&btf_blob::task_storage_blob(spec.value_size)).map_err(|errno| {
                    Error::Os {
                        what: format!("BPF_BTF_LOAD (for map {:?})", spec.name),
                        errno,
                    }
                })?,
            ),
            _ => None,
        };
        let mut attr = MapCreateAttr {
            map_type: spec.map_type.raw(),
            key_size: spec.key_size,
            value_size: spec.value_size,
            max_entries: spec.max_entries,
            map_flags: spec.flags,
            map_name: sys::obj_name(&spec.name),
            ..Default::default()
        };
        if let Some(btf) = &btf {
            attr.btf_fd = btf.as_raw_fd() as u32;
            attr.btf_key_type_id = btf_blob::TASK_STORAGE_KEY;
            attr.btf_value_type_id = btf_blob::TASK_STORAGE_VALUE;
        }
        // SAFETY: the attr holds no pointers; the BTF descriptor, if any, is open.
        let fd = unsafe { sys::bpf_fd(cmd::MAP_CREATE, &mut attr) }.map_err(|errno| Error::Os {
            what: format!("BPF_MAP_CREATE ({:?} {:?})", spec.map_type, spec.name),
            errno,
        })?;
        Ok(Map {
            fd,
            spec: spec.clone(),
            ncpus,
        })
    }

    /// Creates an array of `max_entries` maps shaped like `template` (same type, key and
    /// value sizes), empty until elements are written with their maps' descriptors.
    pub fn create_array_of_maps(name: &str, template: &Map, max_entries: u32) -> Result<Map> {
        rlimit::raise_memlock_once();
        let spec = MapSpec {
            map_type: MapType::ArrayOfMaps,
            key_size: 4,
            value_size: 4,
            max_entries,
            flags: 0,
            name: name.to_string(),
        };
        let mut attr = MapCreateAttr {
            map_type: spec.map_type.raw(),
            key_size: spec.key_size,
            value_size: spec.value_size,
            max_entries,
            inner_map_fd: template.fd() as u32,
            map_name: sys::obj_name(name),
            ..Default::default()
        };
        // SAFETY: the attr holds no pointers; the inner map's descriptor is open.
        let fd = unsafe { sys::bpf_fd(cmd::MAP_CREATE, &mut attr) }.map_err(|errno| Error::Os {
            what: format!("BPF_MAP_CREATE (ArrayOfMaps {name:?})"),
            errno,
        })?;
        Ok(Map { fd, spec, ncpus: 0 })
    }

    /// A map this process got by descriptor (a pinned one), created as `spec` says.
    pub(crate) fn from_fd(fd: OwnedFd, spec: MapSpec) -> Map {
        Map { fd, spec, ncpus: 0 }
    }

    /// The map's file descriptor, for `Insn::ld_map` and friends.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// What the map was created with.
    pub fn spec(&self) -> &MapSpec {
        &self.spec
    }

    /// Another handle on the same kernel map (a duplicated file descriptor), for a thread
    /// that reads it while the owner goes on using its own.
    pub fn try_clone(&self) -> Result<Map> {
        let fd = self.fd.try_clone().map_err(|e| Error::Os {
            what: format!("dup of map {:?}", self.spec.name),
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        })?;
        Ok(Map {
            fd,
            spec: self.spec.clone(),
            ncpus: self.ncpus,
        })
    }

    /// The value as stored for one CPU of a per-CPU map: the value size rounded up to 8.
    fn percpu_stride(&self) -> usize {
        (self.spec.value_size as usize).next_multiple_of(8)
    }

    /// The size of the value buffer the kernel reads or writes for one element.
    fn value_buf_len(&self) -> usize {
        if self.spec.map_type.is_percpu() {
            self.percpu_stride() * self.ncpus
        } else {
            self.spec.value_size as usize
        }
    }

    fn check_key(&self, key: &[u8]) -> Result<()> {
        if key.len() != self.spec.key_size as usize {
            return Err(Error::Invalid(format!(
                "map {:?}: key is {} bytes, expected {}",
                self.spec.name,
                key.len(),
                self.spec.key_size
            )));
        }
        Ok(())
    }

    fn check_value(&self, value: &[u8]) -> Result<()> {
        if value.len() != self.spec.value_size as usize {
            return Err(Error::Invalid(format!(
                "map {:?}: value is {} bytes, expected {}",
                self.spec.name,
                value.len(),
                self.spec.value_size
            )));
        }
        Ok(())
    }

    pub(crate) fn elem(
        &self,
        command: u32,
        key: u64,
        value: u64,
        flags: u64,
    ) -> std::result::Result<(), i32> {
        let mut attr = MapElemAttr {
            map_fd: self.fd() as u32,
            key,
            value,
            flags,
            ..Default::default()
        };
        // SAFETY: callers pass pointers to buffers of key_size / value_buf_len bytes that
        // outlive this call (checked by check_key and by sizing the value buffers).
        unsafe { sys::bpf(command, &mut attr) }.map(drop)
    }

    fn os_error(&self, op: &str, errno: i32) -> Error {
        Error::Os {
            what: format!("{op} on map {:?}", self.spec.name),
            errno,
        }
    }

    fn lookup_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_key(key)?;
        let mut value = vec![0u8; self.value_buf_len()];
        match self.elem(
            cmd::MAP_LOOKUP_ELEM,
            key.as_ptr() as u64,
            value.as_mut_ptr() as u64,
            0,
        ) {
            Ok(()) => Ok(Some(value)),
            Err(libc::ENOENT) => Ok(None),
            Err(errno) => Err(self.os_error("BPF_MAP_LOOKUP_ELEM", errno)),
        }
    }

    /// The value stored under `key`, or `None` if there is none.
    /// For per-CPU maps use [`Map::lookup_percpu`].
    pub fn lookup(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.not_percpu("lookup")?;
        self.lookup_raw(key)
    }

    /// One value per possible CPU (in the order of [`cpus::possible`]), or `None` if the key is absent.
    pub fn lookup_percpu(&self, key: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
        self.percpu_only("lookup_percpu")?;
        let stride = self.percpu_stride();
        let size = self.spec.value_size as usize;
        Ok(self
            .lookup_raw(key)?
            .map(|buf| buf.chunks(stride).map(|c| c[..size].to_vec()).collect()))
    }

    /// Stores `value` under `key`. For per-CPU maps use [`Map::update_percpu`].
    pub fn update(&self, key: &[u8], value: &[u8], how: Update) -> Result<()> {
        self.not_percpu("update")?;
        self.check_key(key)?;
        self.check_value(value)?;
        self.update_raw(key, value, how)
    }

    /// Stores `value` as every CPU's copy of `key` in a per-CPU map (e.g. zeros to clear it).
    pub fn update_percpu(&self, key: &[u8], value: &[u8], how: Update) -> Result<()> {
        self.percpu_only("update_percpu")?;
        self.check_key(key)?;
        self.check_value(value)?;
        let mut buf = vec![0u8; self.value_buf_len()];
        for chunk in buf.chunks_mut(self.percpu_stride()) {
            chunk[..value.len()].copy_from_slice(value);
        }
        self.update_raw(key, &buf, how)
    }

    fn update_raw(&self, key: &[u8], value: &[u8], how: Update) -> Result<()> {
        self.elem(
            cmd::MAP_UPDATE_ELEM,
            key.as_ptr() as u64,
            value.as_ptr() as u64,
            how.raw(),
        )
        .map_err(|errno| self.os_error("BPF_MAP_UPDATE_ELEM", errno))
    }

    /// Deletes `key`; false if it was not there.
    pub fn delete(&self, key: &[u8]) -> Result<bool> {
        self.check_key(key)?;
        match self.elem(cmd::MAP_DELETE_ELEM, key.as_ptr() as u64, 0, 0) {
            Ok(()) => Ok(true),
            Err(libc::ENOENT) => Ok(false),
            Err(errno) => Err(self.os_error("BPF_MAP_DELETE_ELEM", errno)),
        }
    }

    /// The key after `key` (the first key if `key` is `None` or no longer present), or
    /// `None` at the end.
    pub fn next_key(&self, key: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        if let Some(key) = key {
            self.check_key(key)?;
        }
        let mut next = vec![0u8; self.spec.key_size as usize];
        let key_ptr = key.map_or(0, |k| k.as_ptr() as u64);
        match self.elem(cmd::MAP_GET_NEXT_KEY, key_ptr, next.as_mut_ptr() as u64, 0) {
            Ok(()) => Ok(Some(next)),
            Err(libc::ENOENT) => Ok(None),
            Err(errno) => Err(self.os_error("BPF_MAP_GET_NEXT_KEY", errno)),
        }
    }

    /// Every entry of a per-CPU map, each in turn: its key and its value on each CPU (in the
    /// order of [`cpus::possible`]). Read [`BATCH`] entries a system call
    /// (`BPF_MAP_LOOKUP_BATCH`), or key by key where the kernel cannot read this map in
    /// batches. Entries added or deleted meanwhile may or may not be seen.
    pub fn for_each_percpu(&self, each: &mut PercpuVisitor) -> Result<()> {
        self.percpu_only("for_each_percpu")?;
        if self.lookup_batches(each)? {
            return Ok(());
        }
        for key in self.keys() {
            let key = key?;
            if let Some(value) = self.lookup_raw(&key)? {
                let mut cpus = Vec::with_capacity(self.ncpus);
                self.split_percpu(&value, &mut cpus);
                each(&key, &cpus);
            }
        }
        Ok(())
    }

    /// The value on each CPU in a per-CPU value buffer, in `cpus` (emptied first).
    fn split_percpu<'v>(&self, value: &'v [u8], cpus: &mut Vec<&'v [u8]>) {
        let (stride, size) = (self.percpu_stride(), self.spec.value_size as usize);
        cpus.clear();
        cpus.extend(value.chunks(stride).map(|c| &c[..size]));
    }

    /// Every entry by `BPF_MAP_LOOKUP_BATCH`; false (having read nothing) where the kernel
    /// cannot read this map so.
    fn lookup_batches(&self, each: &mut PercpuVisitor) -> Result<bool> {
        let (key_size, value_size) = (self.spec.key_size as usize, self.value_buf_len());
        let mut room = BATCH;
        let mut keys = vec![0u8; room * key_size];
        let mut values = vec![0u8; room * value_size];
        // Hash maps keep their position as a bucket number (4 bytes); room for a key too.
        let (mut at, mut next) = (vec![0u8; key_size.max(8)], vec![0u8; key_size.max(8)]);
        let mut first = true;
        loop {
            let mut attr = MapBatchAttr {
                in_batch: if first { 0 } else { at.as_ptr() as u64 },
                out_batch: next.as_mut_ptr() as u64,
                keys: keys.as_mut_ptr() as u64,
                values: values.as_mut_ptr() as u64,
                count: room as u32,
                map_fd: self.fd() as u32,
                ..Default::default()
            };
            // SAFETY: the key and value buffers hold `count` keys and values of this map's
            // sizes, the batch positions room for what the kernel reads and writes there;
            // all outlive the call.
            let done = match unsafe { sys::bpf(cmd::MAP_LOOKUP_BATCH, &mut attr) } {
                Ok(_) => false,
                Err(libc::ENOENT) => true,
                // A bucket holds more entries than there is room for: make more room.
                Err(libc::ENOSPC) if room < 1 << 20 => {
                    room *= 2;
                    keys.resize(room * key_size, 0);
                    values.resize(room * value_size, 0);
                    continue;
                }
                Err(libc::EINVAL | libc::ENOTSUP | ENOTSUPP) if first => return Ok(false),
                Err(errno) => return Err(self.os_error("BPF_MAP_LOOKUP_BATCH", errno)),
            };
            let read = attr.count as usize;
            // One vector of CPU values for the batch, not one an entry.
            let mut cpus = Vec::with_capacity(self.ncpus);
            for (key, value) in keys
                .chunks(key_size)
                .zip(values.chunks(value_size))
                .take(read)
            {
                self.split_percpu(value, &mut cpus);
                each(key, &cpus);
            }
            if done {
                return Ok(true);
            }
            std::mem::swap(&mut at, &mut next);
            first = false;
        }
    }

    /// Iterates over all keys (in the kernel's order). Keys deleted or added meanwhile may
    /// or may not be seen; a hash map may restart from its first key if the current key is deleted.
    pub fn keys(&self) -> Keys<'_> {
        Keys {
            map: self,
            last: None,
            done: false,
        }
    }

    fn not_percpu(&self, op: &str) -> Result<()> {
        if self.spec.map_type.is_percpu() {
            return Err(Error::Invalid(format!(
                "map {:?} is per-CPU: use {op}_percpu",
                self.spec.name
            )));
        }
        Ok(())
    }

    fn percpu_only(&self, op: &str) -> Result<()> {
        if !self.spec.map_type.is_percpu() {
            return Err(Error::Invalid(format!(
                "{op} on map {:?}, which is not per-CPU",
                self.spec.name
            )));
        }
        Ok(())
    }
}

impl AsFd for Map {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Iterator over a map's keys; see [`Map::keys`].
pub struct Keys<'a> {
    map: &'a Map,
    last: Option<Vec<u8>>,
    done: bool,
}

impl Iterator for Keys<'_> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.map.next_key(self.last.as_deref()) {
            Ok(Some(key)) => {
                self.last = Some(key.clone());
                Some(Ok(key))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;

    fn k(n: u32) -> [u8; 4] {
        n.to_ne_bytes()
    }

    #[test]
    fn hash_crud_and_iteration() {
        let m = testutil::map(MapType::Hash, 8, 16);
        assert_eq!(m.lookup(&k(1)).unwrap(), None);
        m.update(&k(1), &10u64.to_ne_bytes(), Update::NoExist)
            .unwrap();
        m.update(&k(2), &20u64.to_ne_bytes(), Update::Any).unwrap();
        let err = m
            .update(&k(1), &11u64.to_ne_bytes(), Update::NoExist)
            .unwrap_err();
        assert_eq!(err.errno(), Some(libc::EEXIST), "{err}");
        let err = m
            .update(&k(3), &30u64.to_ne_bytes(), Update::Exist)
            .unwrap_err();
        assert_eq!(err.errno(), Some(libc::ENOENT), "{err}");
        m.update(&k(1), &11u64.to_ne_bytes(), Update::Exist)
            .unwrap();
        assert_eq!(m.lookup(&k(1)).unwrap(), Some(11u64.to_ne_bytes().to_vec()));

        let mut keys: Vec<Vec<u8>> = m.keys().collect::<Result<_>>().unwrap();
        keys.sort();
        let mut want = vec![k(1).to_vec(), k(2).to_vec()];
        want.sort();
        assert_eq!(keys, want);

        assert!(m.delete(&k(1)).unwrap());
        assert!(!m.delete(&k(1)).unwrap());
        assert_eq!(m.keys().count(), 1);
        assert_eq!(m.next_key(Some(&k(2))).unwrap(), None);
    }

    #[test]
    fn array_elements_exist_and_are_bounded() {
        let m = testutil::map(MapType::Array, 4, 4);
        assert_eq!(m.lookup(&k(3)).unwrap(), Some(vec![0; 4]));
        assert_eq!(m.lookup(&k(4)).unwrap(), None);
        m.update(&k(2), &7u32.to_ne_bytes(), Update::Any).unwrap();
        assert_eq!(m.lookup(&k(2)).unwrap(), Some(7u32.to_ne_bytes().to_vec()));
        let err = m.update(&k(4), &[0; 4], Update::Any).unwrap_err();
        assert_eq!(err.errno(), Some(libc::E2BIG), "{err}");
        assert!(m.delete(&k(0)).is_err(), "array elements cannot be deleted");
        assert_eq!(m.keys().count(), 4);
    }

    #[test]
    fn percpu_maps_hold_one_value_per_possible_cpu() {
        let ncpus = crate::cpus::possible().unwrap().len();
        // 12-byte values are padded to 16 per CPU by the kernel.
        for map_type in [MapType::PercpuHash, MapType::PercpuArray] {
            let m = testutil::map(map_type, 12, 4);
            let value: Vec<u8> = (1..=12).collect();
            m.update_percpu(&k(1), &value, Update::Any).unwrap();
            let values = m.lookup_percpu(&k(1)).unwrap().unwrap();
            assert_eq!(values.len(), ncpus);
            assert!(values.iter().all(|v| *v == value), "{values:?}");
            assert!(m.lookup(&k(1)).is_err(), "plain lookup on a per-CPU map");
            assert!(m.update(&k(1), &value, Update::Any).is_err());
        }
        let m = testutil::map(MapType::PercpuHash, 8, 4);
        assert_eq!(m.lookup_percpu(&k(9)).unwrap(), None);
        assert!(testutil::map(MapType::Hash, 8, 4)
            .lookup_percpu(&k(0))
            .is_err());
    }

    #[test]
    fn every_entry_of_a_percpu_map_is_read_in_batches() {
        // More entries than one batch holds, values of 12 bytes (16 per CPU).
        let n = BATCH as u32 * 2 + 123;
        let m = testutil::map(MapType::PercpuHash, 12, n);
        for i in 0..n {
            let value: Vec<u8> = (0..12).map(|b| (i as u8).wrapping_add(b)).collect();
            m.update_percpu(&k(i), &value, Update::Any).unwrap();
        }
        let ncpus = crate::cpus::possible().unwrap().len();
        let mut seen = vec![false; n as usize];
        m.for_each_percpu(&mut |key, cpus| {
            let i = u32::from_ne_bytes(key.try_into().unwrap());
            assert!(
                !std::mem::replace(&mut seen[i as usize], true),
                "key {i} twice"
            );
            assert_eq!(cpus.len(), ncpus);
            let value: Vec<u8> = (0..12).map(|b| (i as u8).wrapping_add(b)).collect();
            assert!(
                cpus.iter().all(|c| *c == value.as_slice()),
                "key {i}: {cpus:?}"
            );
        })
        .unwrap();
        assert!(seen.iter().all(|&s| s), "every key read");
        let empty = testutil::map(MapType::PercpuHash, 8, 4);
        empty
            .for_each_percpu(&mut |_, _| panic!("an entry"))
            .unwrap();
        assert!(testutil::map(MapType::Hash, 8, 4)
            .for_each_percpu(&mut |_, _| {})
            .is_err());
    }

    #[test]
    fn wrong_sizes_are_refused_before_the_kernel() {
        let m = testutil::map(MapType::Hash, 8, 4);
        assert!(matches!(m.lookup(&[0; 3]), Err(Error::Invalid(_))));
        assert!(matches!(
            m.update(&k(0), &[0; 7], Update::Any),
            Err(Error::Invalid(_))
        ));
    }

    #[test]
    fn other_map_types_can_be_created() {
        let ncpus = crate::cpus::possible().unwrap().len() as u32;
        testutil::map(MapType::PerfEventArray, 4, ncpus);
        testutil::map(MapType::StackTrace, 8 * 127, 64);
        testutil::map(MapType::LruHash, 8, 64);
        let rb = testutil::ringbuf(4096);
        assert_eq!(rb.spec().map_type, MapType::RingBuf);
        assert!(rb.fd() >= 0);
    }

    #[test]
    fn creation_errors_carry_errno_and_context() {
        // Array keys must be 4 bytes.
        let err = Map::create(&MapSpec {
            map_type: MapType::Array,
            key_size: 8,
            value_size: 8,
            max_entries: 1,
            flags: 0,
            name: "bad".into(),
        })
        .unwrap_err();
        assert_eq!(err.errno(), Some(libc::EINVAL));
        assert!(err.to_string().contains("BPF_MAP_CREATE"), "{err}");
    }
}
