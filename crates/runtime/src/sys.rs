//! The raw system call boundary: `bpf(2)` and `perf_event_open(2)`, with the `repr(C)`
//! pieces of `union bpf_attr` and `struct perf_event_attr` this crate passes to them.
//!
//! Each attr struct is a prefix of the kernel's layout; the kernel zero-fills whatever
//! lies beyond the size we pass, so a prefix is all a command needs. The structs have no
//! implicit padding (every gap is a named `_pad` field, zeroed by `Default`), because the
//! kernel rejects attrs whose unused bytes are not zero.

use std::mem::size_of;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::error::{Error, Result};

/// `enum bpf_cmd` values used by this crate.
pub mod cmd {
    pub const MAP_CREATE: u32 = 0;
    pub const MAP_LOOKUP_ELEM: u32 = 1;
    pub const MAP_UPDATE_ELEM: u32 = 2;
    pub const MAP_DELETE_ELEM: u32 = 3;
    pub const MAP_GET_NEXT_KEY: u32 = 4;
    pub const PROG_LOAD: u32 = 5;
    pub const OBJ_PIN: u32 = 6;
    pub const OBJ_GET: u32 = 7;
    pub const PROG_TEST_RUN: u32 = 10;
    pub const OBJ_GET_INFO_BY_FD: u32 = 15;
    pub const RAW_TRACEPOINT_OPEN: u32 = 17;
    pub const BTF_LOAD: u32 = 18;
    pub const MAP_LOOKUP_BATCH: u32 = 24;
    pub const LINK_CREATE: u32 = 28;
}

/// `BPF_OBJ_NAME_LEN`: object names hold 15 characters and a NUL.
pub const OBJ_NAME_LEN: usize = 16;

/// The `BPF_MAP_CREATE` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct MapCreateAttr {
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub inner_map_fd: u32,
    pub numa_node: u32,
    pub map_name: [u8; OBJ_NAME_LEN],
    pub map_ifindex: u32,
    /// The BTF object describing key and value (task local storage needs one), or 0.
    pub btf_fd: u32,
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
}

/// The `BPF_MAP_*_ELEM` / `BPF_MAP_GET_NEXT_KEY` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct MapElemAttr {
    pub map_fd: u32,
    pub _pad: u32,
    /// Pointer to the key.
    pub key: u64,
    /// Pointer to the value (or to the next key, for `BPF_MAP_GET_NEXT_KEY`).
    pub value: u64,
    pub flags: u64,
}

/// The `BPF_MAP_*_BATCH` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct MapBatchAttr {
    /// Pointer to where the previous batch ended (0 for the first batch).
    pub in_batch: u64,
    /// Pointer to where this batch ends, written by the kernel.
    pub out_batch: u64,
    /// Pointer to room for `count` keys, and to room for `count` values.
    pub keys: u64,
    pub values: u64,
    /// Elements room is given for; the kernel writes how many it read.
    pub count: u32,
    pub map_fd: u32,
    pub elem_flags: u64,
    pub flags: u64,
}

/// The `BPF_OBJ_PIN` / `BPF_OBJ_GET` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct ObjAttr {
    /// Pointer to the NUL-terminated path under the BPF file system.
    pub pathname: u64,
    pub bpf_fd: u32,
    pub file_flags: u32,
}

/// The `BPF_OBJ_GET_INFO_BY_FD` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct InfoAttr {
    pub bpf_fd: u32,
    pub info_len: u32,
    /// Pointer to the info struct (`struct bpf_map_info` for a map).
    pub info: u64,
}

/// `struct bpf_map_info` up to its name.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct MapInfo {
    pub map_type: u32,
    pub id: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub name: [u8; OBJ_NAME_LEN],
}

/// The `BPF_PROG_LOAD` part of `union bpf_attr`, up to `log_true_size`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct ProgLoadAttr {
    pub prog_type: u32,
    pub insn_cnt: u32,
    pub insns: u64,
    pub license: u64,
    pub log_level: u32,
    pub log_size: u32,
    pub log_buf: u64,
    pub kern_version: u32,
    pub prog_flags: u32,
    pub prog_name: [u8; OBJ_NAME_LEN],
    pub prog_ifindex: u32,
    pub expected_attach_type: u32,
    pub prog_btf_fd: u32,
    pub func_info_rec_size: u32,
    pub func_info: u64,
    pub func_info_cnt: u32,
    pub line_info_rec_size: u32,
    pub line_info: u64,
    pub line_info_cnt: u32,
    pub attach_btf_id: u32,
    pub attach_prog_fd: u32,
    pub core_relo_cnt: u32,
    pub fd_array: u64,
    pub core_relos: u64,
    pub core_relo_rec_size: u32,
    /// Set by the kernel: the log size the full verifier log needs.
    pub log_true_size: u32,
}

/// The `BPF_BTF_LOAD` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct BtfLoadAttr {
    pub btf: u64,
    pub btf_log_buf: u64,
    pub btf_size: u32,
    pub btf_log_size: u32,
    pub btf_log_level: u32,
    /// Explicit tail padding: the kernel rejects non-zero bytes past the last field.
    pub _pad: u32,
}

/// `struct bpf_func_info`: where a function starts and its BTF type.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct FuncInfo {
    pub insn_off: u32,
    pub type_id: u32,
}

/// The `BPF_PROG_TEST_RUN` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct TestRunAttr {
    pub prog_fd: u32,
    /// Set by the kernel: the program's return value.
    pub retval: u32,
    pub data_size_in: u32,
    pub data_size_out: u32,
    pub data_in: u64,
    pub data_out: u64,
    pub repeat: u32,
    pub duration: u32,
    pub ctx_size_in: u32,
    pub ctx_size_out: u32,
    pub ctx_in: u64,
    pub ctx_out: u64,
    pub flags: u32,
    pub cpu: u32,
    pub batch_size: u32,
    /// Explicit tail padding: the kernel rejects non-zero bytes past the last field.
    pub _pad: u32,
}

/// `BPF_F_TEST_RUN_ON_CPU`: run the test on `TestRunAttr::cpu` rather than the current CPU.
pub const BPF_F_TEST_RUN_ON_CPU: u32 = 1;

/// `BPF_F_SLEEPABLE` (`prog_flags` of `BPF_PROG_LOAD`): the program may sleep.
pub const BPF_F_SLEEPABLE: u32 = 1 << 4;

/// The `BPF_RAW_TRACEPOINT_OPEN` part of `union bpf_attr`.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct RawTracepointAttr {
    /// Pointer to the NUL-terminated tracepoint name (0 for BTF-typed `tp_btf` programs).
    pub name: u64,
    pub prog_fd: u32,
    pub _pad: u32,
}

/// The `BPF_LINK_CREATE` part of `union bpf_attr`, with the `perf_event` variant of its union.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct LinkCreateAttr {
    pub prog_fd: u32,
    pub target_fd: u32,
    pub attach_type: u32,
    pub flags: u32,
    /// `perf_event.bpf_cookie`: the value `bpf_get_attach_cookie()` returns.
    pub bpf_cookie: u64,
}

/// `enum bpf_attach_type`: `BPF_PERF_EVENT`.
pub const BPF_PERF_EVENT: u32 = 41;

/// Calls `bpf(cmd, attr, sizeof(*attr))` and returns its non-negative result or the errno.
///
/// # Safety
/// Every pointer stored in `attr` must be valid for the access `cmd` makes through it
/// (reads of the stated sizes, writes to output buffers) for the duration of the call.
pub unsafe fn bpf<T>(cmd: u32, attr: &mut T) -> std::result::Result<i64, i32> {
    // SAFETY: `attr` is a live, exclusively borrowed repr(C) attr prefix of the size we pass;
    // the caller guarantees the pointers inside it.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd as libc::c_long,
            attr as *mut T as *mut libc::c_void,
            size_of::<T>() as libc::c_uint,
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(ret)
    }
}

/// Like [`bpf`], for commands that return a new file descriptor.
///
/// # Safety
/// As for [`bpf`].
pub unsafe fn bpf_fd<T>(cmd: u32, attr: &mut T) -> std::result::Result<OwnedFd, i32> {
    // SAFETY: forwarded from the caller.
    let fd = unsafe { bpf(cmd, attr) }?;
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `struct perf_event_attr` up to `config2` (`PERF_ATTR_SIZE_VER1`).
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    /// `sample_period`, or `sample_freq` when [`PERF_ATTR_FLAG_FREQ`] is set.
    pub sample_period_or_freq: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// The bitfield word: `disabled`, `inherit`, ..., `freq`, ...
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
}

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;
pub const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
/// `perf_event_attr.disabled`.
pub const PERF_ATTR_FLAG_DISABLED: u64 = 1 << 0;
/// `perf_event_attr.exclude_user`: count only outside user mode.
pub const PERF_ATTR_FLAG_EXCLUDE_USER: u64 = 1 << 4;
/// `perf_event_attr.exclude_kernel`: count only outside kernel mode.
pub const PERF_ATTR_FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
/// `perf_event_attr.freq`: the sample field is a frequency in Hz.
pub const PERF_ATTR_FLAG_FREQ: u64 = 1 << 10;
pub const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// `_IO('$', 0)`
pub const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
/// `_IOW('$', 8, __u32)`
pub const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;

/// Calls `perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC)`; errors carry `what`.
pub fn perf_event_open(
    attr: &PerfEventAttr,
    pid: i32,
    cpu: i32,
    what: impl FnOnce() -> String,
) -> Result<OwnedFd> {
    let mut attr = *attr;
    attr.size = size_of::<PerfEventAttr>() as u32;
    // SAFETY: `attr` is a complete perf_event_attr prefix whose size field matches; the
    // kernel only reads it (config1/config2 pointers are not used by the types we open
    // unless the caller filled them, in which case they point at live data it owns).
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            pid as libc::pid_t,
            cpu as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(Error::last_os(what()));
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `ioctl(fd, request, arg)` on a perf event; errors carry `what`.
pub fn perf_ioctl(
    fd: &OwnedFd,
    request: libc::c_ulong,
    arg: libc::c_int,
    what: impl FnOnce() -> String,
) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the perf ioctls we issue take an integer argument (no pointers), and `fd` is open.
    let ret = unsafe { libc::ioctl(fd.as_raw_fd(), request, arg) };
    if ret < 0 {
        Err(Error::last_os(what()))
    } else {
        Ok(())
    }
}

/// Copies `name` into a NUL-terminated kernel object name, keeping only the characters the
/// kernel accepts (alphanumerics, `_` and `.`; others become `_`) and at most 15 of them.
pub fn obj_name(name: &str) -> [u8; OBJ_NAME_LEN] {
    let mut out = [0u8; OBJ_NAME_LEN];
    for (slot, c) in out[..OBJ_NAME_LEN - 1].iter_mut().zip(name.bytes()) {
        *slot = if c.is_ascii_alphanumeric() || c == b'.' {
            c
        } else {
            b'_'
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn attr_layouts_match_the_kernel() {
        assert_eq!(offset_of!(MapCreateAttr, map_name), 28);
        assert_eq!(offset_of!(MapElemAttr, key), 8);
        assert_eq!(offset_of!(MapElemAttr, flags), 24);
        assert_eq!(offset_of!(ProgLoadAttr, log_buf), 32);
        assert_eq!(offset_of!(ProgLoadAttr, prog_name), 48);
        assert_eq!(offset_of!(ProgLoadAttr, expected_attach_type), 68);
        assert_eq!(offset_of!(ProgLoadAttr, attach_btf_id), 108);
        assert_eq!(offset_of!(ProgLoadAttr, fd_array), 120);
        assert_eq!(offset_of!(ProgLoadAttr, log_true_size), 140);
        assert_eq!(size_of::<ProgLoadAttr>(), 144);
        assert_eq!(offset_of!(TestRunAttr, ctx_size_in), 40);
        assert_eq!(offset_of!(TestRunAttr, ctx_in), 48);
        assert_eq!(offset_of!(TestRunAttr, flags), 64);
        assert_eq!(offset_of!(TestRunAttr, cpu), 68);
        assert_eq!(offset_of!(LinkCreateAttr, bpf_cookie), 16);
        assert_eq!(offset_of!(RawTracepointAttr, prog_fd), 8);
        assert_eq!(offset_of!(PerfEventAttr, flags), 40);
        assert_eq!(offset_of!(PerfEventAttr, config1), 56);
        assert_eq!(size_of::<PerfEventAttr>(), 72);
        assert_eq!(size_of::<TestRunAttr>(), 80);
        assert_eq!(offset_of!(TestRunAttr, _pad), 76);
        assert_eq!(size_of::<MapCreateAttr>(), 60);
        assert_eq!(offset_of!(MapCreateAttr, btf_fd), 48);
        assert_eq!(size_of::<MapElemAttr>(), 32);
        assert_eq!(offset_of!(MapBatchAttr, count), 32);
        assert_eq!(size_of::<MapBatchAttr>(), 56);
        assert_eq!(size_of::<LinkCreateAttr>(), 24);
        assert_eq!(size_of::<RawTracepointAttr>(), 16);
        assert_eq!(size_of::<ObjAttr>(), 16);
        assert_eq!(size_of::<InfoAttr>(), 16);
        assert_eq!(offset_of!(MapInfo, name), 24);
    }

    #[test]
    fn obj_names_are_sanitised_and_truncated() {
        assert_eq!(&obj_name("a.b_c")[..6], b"a.b_c\0");
        assert_eq!(&obj_name("syscall::read:entry")[..], b"syscall__read_e\0");
    }

    #[test]
    fn bpf_reports_errno() {
        // Looking up in fd -1 is EBADF on every kernel.
        let mut attr = MapElemAttr {
            map_fd: u32::MAX,
            ..Default::default()
        };
        // SAFETY: the attr holds no pointers the kernel would follow before rejecting the fd.
        assert_eq!(
            unsafe { bpf(cmd::MAP_LOOKUP_ELEM, &mut attr) },
            Err(libc::EBADF)
        );
    }
}
