//! Test support: a builder for tiny hand-made BTF blobs, plus a fixture
//! blob exercising every kind, shared by the unit tests of each module.

use crate::TypeId;

/// Builds a little-endian BTF blob type by type; ids are returned in order.
pub(crate) struct Builder {
    types: Vec<u32>,
    strings: Vec<u8>,
    next_id: TypeId,
    /// Where this blob's strings start: the base's string length for a split blob.
    str_base: u32,
}

impl Builder {
    pub fn new() -> Self {
        Builder {
            types: Vec::new(),
            strings: vec![0],
            next_id: 1,
            str_base: 0,
        }
    }

    /// A split blob on a base of `base_types` types (void included) whose string section
    /// is `base_str_len` bytes long.
    pub fn split(base_types: u32, base_str_len: u32) -> Self {
        Builder {
            types: Vec::new(),
            strings: Vec::new(),
            next_id: base_types,
            str_base: base_str_len,
        }
    }

    /// Adds a string, returning its offset (0 for "").
    pub fn str(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return 0;
        }
        let off = self.str_base + self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        off
    }

    /// Adds a raw type record followed by `extra` words.
    pub fn raw(
        &mut self,
        name: &str,
        kind: u32,
        flag: bool,
        vlen: u32,
        st: u32,
        extra: &[u32],
    ) -> TypeId {
        let name = self.str(name);
        let info = vlen | (kind << 24) | (u32::from(flag) << 31);
        self.types.extend_from_slice(&[name, info, st]);
        self.types.extend_from_slice(extra);
        self.next_id += 1;
        self.next_id - 1
    }

    pub fn int(&mut self, name: &str, size: u32, signed: bool, char: bool) -> TypeId {
        let enc = u32::from(signed) | (u32::from(char) << 1);
        self.raw(name, 1, false, 0, size, &[(enc << 24) | (size * 8)])
    }

    /// Struct (or union) with kind_flag bitfield encoding.
    pub fn composite(
        &mut self,
        union: bool,
        name: &str,
        size: u32,
        members: &[(&str, TypeId, u32, u32)],
    ) -> TypeId {
        let mut extra = Vec::new();
        for &(n, ty, bit_off, bits) in members {
            let n = self.str(n);
            extra.extend_from_slice(&[n, ty, (bits << 24) | bit_off]);
        }
        let kind = if union { 5 } else { 4 };
        self.raw(name, kind, true, members.len() as u32, size, &extra)
    }

    pub fn build(&self) -> Vec<u8> {
        self.build_endian(false)
    }

    /// The blob in big-endian (`big`) or little-endian byte order.
    pub fn build_endian(&self, big: bool) -> Vec<u8> {
        let type_len = (self.types.len() * 4) as u32;
        let (magic, bytes): (u32, fn(u32) -> [u8; 4]) = if big {
            (0xeb9f_0100, u32::to_be_bytes)
        } else {
            (0x0001_eb9f, u32::to_le_bytes)
        };
        let header = [magic, 24, 0, type_len, type_len, self.strings.len() as u32];
        let mut out: Vec<u8> = header.iter().flat_map(|&w| bytes(w)).collect();
        out.extend(self.types.iter().flat_map(|&w| bytes(w)));
        out.extend_from_slice(&self.strings);
        out
    }
}

/// Ids of the fixture's types.
pub(crate) struct Fixture {
    pub int: TypeId,
    pub char: TypeId,
    pub ulong: TypeId,
    pub pid_t: TypeId,
    pub task: TypeId,
    pub task_ptr: TypeId,
    pub const_char: TypeId,
    pub const_char_ptr: TypeId,
    pub comm: TypeId,
    pub inner: TypeId,
    pub anon_union: TypeId,
    pub color: TypeId,
    pub big: TypeId,
    pub proto: TypeId,
    pub func: TypeId,
    pub fn_ptr: TypeId,
    pub variadic: TypeId,
    pub legacy: TypeId,
    pub bytes: Vec<u8>,
}

/// A blob in the spirit of the kernel's: a `task_struct` with a nested
/// struct, an anonymous union, a bitfield, a pointer to itself and a
/// `char[16]`; typedefs, enums, a function and a function pointer.
pub(crate) fn fixture() -> Fixture {
    let mut b = Builder::new();
    let int = b.int("int", 4, true, false);
    let char = b.int("char", 1, true, true);
    let ulong = b.int("unsigned long", 8, false, false);
    let pid_t = b.raw("pid_t", 8, false, 0, int, &[]);
    let fwd_task = b.raw("task_struct", 7, false, 0, 0, &[]);
    let task_ptr = b.raw("", 2, false, 0, fwd_task + 2, &[]); // -> task_struct below
    let task = b.composite(
        false,
        "task_struct",
        64,
        &[
            ("pid", pid_t, 0, 0),
            ("flags", int, 32, 3),
            ("", fwd_task + 4, 64, 0), // anonymous union
            ("comm", fwd_task + 5, 128, 0),
            ("se", fwd_task + 6, 256, 0),
            ("parent", task_ptr, 448, 0),
        ],
    );
    assert_eq!(task, fwd_task + 2);
    let const_char = b.raw("", 10, false, 0, char, &[]);
    let anon_union = b.composite(true, "", 8, &[("a", int, 0, 0), ("b", ulong, 0, 0)]);
    let comm = b.raw("", 3, false, 0, 0, &[char, int, 16]);
    let inner = b.composite(
        false,
        "sched_entity",
        24,
        &[("load", ulong, 0, 0), ("sum", ulong, 64, 0)],
    );
    assert_eq!((anon_union, comm, inner), (task + 2, task + 3, task + 4));
    let const_char_ptr = b.raw("", 2, false, 0, const_char, &[]);
    let red = b.str("RED");
    let blue = b.str("BLUE");
    let color = b.raw("color", 6, true, 2, 4, &[red, 0, blue, (-3i32) as u32]);
    let huge = b.str("HUGE");
    let big = b.raw("big", 19, false, 1, 8, &[huge, 1, 0x8000_0000]);
    let (p1, p2) = (b.str("fd"), b.str("name"));
    let proto = b.raw("", 13, false, 2, int, &[p1, int, p2, const_char_ptr]);
    let func = b.raw("do_open", 12, false, 1, proto, &[]);
    let fn_ptr = b.raw("", 2, false, 0, proto, &[]);
    let variadic = b.raw("", 13, false, 2, 0, &[0, const_char_ptr, 0, 0]);
    // A legacy (no kind_flag) bitfield: the width lives in the int type.
    let bits5 = b.raw("unsigned int", 1, false, 0, 4, &[(3 << 16) | 5]);
    let x = b.str("x");
    let legacy = b.raw("legacy", 4, false, 1, 4, &[x, bits5, 8]);
    Fixture {
        int,
        char,
        ulong,
        pid_t,
        task,
        task_ptr,
        const_char,
        const_char_ptr,
        comm,
        inner,
        anon_union,
        color,
        big,
        proto,
        func,
        fn_ptr,
        variadic,
        legacy,
        bytes: b.build(),
    }
}
