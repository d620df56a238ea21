//! Maps pinned under the BPF file system: the one kind of kernel object `dtrace` leaves
//! behind, and only when asked (`-x ringpin`). A pinned map lives until its file is removed,
//! whatever happens to the process that pinned it; no program or link is ever pinned.

use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::map::{Map, MapSpec, MapType};
use crate::sys::{self, cmd, InfoAttr, MapInfo, ObjAttr};
use crate::tracefs::fs_type;

/// Where the BPF file system is mounted.
pub const BPFFS: &str = "/sys/fs/bpf";
/// `BPF_FS_MAGIC`, the `f_type` statfs reports for the BPF file system.
const BPF_FS_MAGIC: i64 = 0xcafe_4a11;

/// Mounts the BPF file system at [`BPFFS`] unless it is mounted there; returns the path.
pub fn ensure_bpffs() -> Result<PathBuf> {
    let path = PathBuf::from(BPFFS);
    if fs_type(&path)? == BPF_FS_MAGIC {
        return Ok(path);
    }
    // SAFETY: all strings are NUL-terminated literals.
    let ret = unsafe {
        libc::mount(
            c"bpf".as_ptr(),
            c"/sys/fs/bpf".as_ptr(),
            c"bpf".as_ptr(),
            0,
            c"mode=0700".as_ptr().cast(),
        )
    };
    if ret != 0 {
        return Err(Error::last_os(format!(
            "mount the BPF file system on {BPFFS}"
        )));
    }
    Ok(path)
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::Invalid(format!("{path:?} contains NUL")))
}

impl Map {
    /// Pin the map at `path` (under the BPF file system): it outlives this process until
    /// the file is removed.
    pub fn pin(&self, path: &Path) -> Result<()> {
        let name = c_path(path)?;
        let mut attr = ObjAttr {
            pathname: name.as_ptr() as u64,
            bpf_fd: self.fd() as u32,
            ..Default::default()
        };
        // SAFETY: the path is NUL-terminated and outlives the call.
        unsafe { sys::bpf(cmd::OBJ_PIN, &mut attr) }
            .map(drop)
            .map_err(|errno| Error::Os {
                what: format!("BPF_OBJ_PIN at {}", path.display()),
                errno,
            })
    }

    /// The map pinned at `path`, with what it was created with.
    pub fn from_pinned(path: &Path) -> Result<Map> {
        let name = c_path(path)?;
        let mut attr = ObjAttr {
            pathname: name.as_ptr() as u64,
            ..Default::default()
        };
        // SAFETY: the path is NUL-terminated and outlives the call.
        let fd = unsafe { sys::bpf_fd(cmd::OBJ_GET, &mut attr) }.map_err(|errno| Error::Os {
            what: format!("BPF_OBJ_GET of {}", path.display()),
            errno,
        })?;
        let mut info = MapInfo::default();
        let mut attr = InfoAttr {
            bpf_fd: fd.as_raw_fd() as u32,
            info_len: size_of::<MapInfo>() as u32,
            info: &mut info as *mut MapInfo as u64,
        };
        // SAFETY: `info` is a writable buffer of the length we pass, alive for the call.
        unsafe { sys::bpf(cmd::OBJ_GET_INFO_BY_FD, &mut attr) }.map_err(|errno| Error::Os {
            what: format!("BPF_OBJ_GET_INFO_BY_FD of {}", path.display()),
            errno,
        })?;
        let map_type = match info.map_type {
            2 => MapType::Array,
            27 => MapType::RingBuf,
            other => {
                return Err(Error::Invalid(format!(
                    "{} is a map of type {other}, not one dtrace pins",
                    path.display()
                )))
            }
        };
        let name_len = info.name.iter().position(|&b| b == 0).unwrap_or(0);
        let spec = MapSpec {
            map_type,
            key_size: info.key_size,
            value_size: info.value_size,
            max_entries: info.max_entries,
            flags: info.map_flags,
            name: String::from_utf8_lossy(&info.name[..name_len]).into_owned(),
        };
        Ok(Map::from_fd(fd, spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;
    use crate::Update;

    #[test]
    fn a_pinned_map_is_found_again_with_its_shape_and_contents() {
        let dir = ensure_bpffs()
            .unwrap()
            .join(format!("dtrace-pin-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let map = testutil::map(MapType::Array, 16, 2);
        map.update(&1u32.to_ne_bytes(), &[7; 16], Update::Any)
            .unwrap();
        let path = dir.join("array");
        map.pin(&path).unwrap();
        drop(map);
        let again = Map::from_pinned(&path).unwrap();
        assert_eq!(again.spec().map_type, MapType::Array);
        assert_eq!((again.spec().value_size, again.spec().max_entries), (16, 2));
        assert_eq!(
            again.lookup(&1u32.to_ne_bytes()).unwrap(),
            Some(vec![7; 16])
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(Map::from_pinned(&path).is_err());
    }
}
