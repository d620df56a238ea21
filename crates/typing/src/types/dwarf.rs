//! A traced program's DWARF as BTF: the debugging information entries of the functions a
//! `pid` probe names, and the types their parameters and results need (structs, unions,
//! enums, typedefs, arrays, pointers, qualifiers, bit-fields, function types), converted
//! into a [`Builder`] so that [`super::user`] types them with the kernel's conversion.
//!
//! Nothing is read before a clause types `args[]` of a `pid` probe: then the object's
//! debugging sections (its own, else its separate debug file's, found by build ID or
//! `.gnu_debuglink`; zlib- and zstd-compressed sections are unpacked) are read, the names of its functions indexed once, and only the
//! types reachable from the functions asked for are converted (each once per object).
//!
//! C++: classes and structs convert as structs (base classes as anonymous members, so
//! theirs are reached through them; methods and static members are left out), references
//! as pointers; a function is found by its DWARF name or its mangled linkage name.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::Path;

use super::kernel::Tag;
use dtrace_btf::{
    Array, Builder, Composite, Enum, Enumerator, FuncProto, Int, Member, Param, TypeId, TypeKind,
};
use gimli::{AttributeValue, DwTag, EndianSlice, LittleEndian, UnitOffset};

type R = EndianSlice<'static, LittleEndian>;

/// How many levels of types a conversion follows before it gives up (as `void`).
const MAX_DEPTH: usize = 64;

/// Where a debugging information entry is: its unit (an index) and offset in it.
type Die = (usize, UnitOffset);

/// One object's DWARF and what has been converted from it.
pub(crate) struct Types {
    dwarf: gimli::Dwarf<R>,
    headers: Vec<gimli::UnitHeader<R>>,
    /// The units, each parsed on first use.
    units: Vec<OnceCell<Option<gimli::Unit<R>>>>,
    /// The addresses of the object's function symbols, by name.
    addresses: HashMap<String, u64>,
    /// The functions' entries, built on first use.
    functions: Option<Functions>,
    /// The named types at the top of each unit, built on first use.
    named: Option<HashMap<(Tag, String), Die>>,
    converted: HashMap<Die, TypeId>,
    /// The functions asked for: their parameter types and result (None: not described).
    signatures: HashMap<String, Option<(Vec<TypeId>, TypeId)>>,
    pub(crate) btf: Builder,
}

impl Types {
    /// The DWARF of the object at `path`, or of its separate debug file; an error says why
    /// there is none.
    pub(crate) fn load(path: &Path) -> Result<Types, String> {
        let own = read(path)?;
        let elf = dtrace_elf::Elf::parse(own).map_err(|e| e.0)?;
        let mut addresses = HashMap::new();
        for sym in elf.symbols().unwrap_or_default() {
            if sym.is_func {
                addresses.entry(sym.name).or_insert(sym.value);
            }
        }
        let elf = if elf.section(".debug_info").is_some() {
            elf
        } else {
            let debug = dtrace_elf::debug_file(path, &elf)
                .ok_or_else(|| format!("{} has no DWARF", path.display()))?;
            let data = read(&debug)?;
            let elf = dtrace_elf::Elf::parse(data).map_err(|e| e.0)?;
            if elf.section(".debug_info").is_none() {
                return Err(format!("{} has no DWARF", debug.display()));
            }
            elf
        };
        let dwarf = gimli::Dwarf::load(|id| -> Result<R, String> {
            let bytes = match elf.section(id.name()).filter(|_| needed(id)) {
                Some(s) => section_bytes(&elf, s)?,
                None => &[][..],
            };
            Ok(EndianSlice::new(bytes, LittleEndian))
        })?;
        let mut headers = Vec::new();
        let mut iter = dwarf.units();
        while let Ok(Some(header)) = iter.next() {
            headers.push(header);
        }
        Ok(Types {
            dwarf,
            units: headers.iter().map(|_| OnceCell::new()).collect(),
            headers,
            addresses,
            functions: None,
            named: None,
            converted: HashMap::new(),
            signatures: HashMap::new(),
            btf: Builder::default(),
        })
    }

    /// The BTF ids of `function`'s parameter types and result type (`void` is 0), None
    /// if the DWARF does not describe it.
    pub(crate) fn signature(&mut self, function: &str) -> Option<(Vec<TypeId>, TypeId)> {
        if let Some(s) = self.signatures.get(function) {
            return s.clone();
        }
        let s = self.convert_function(function);
        self.signatures.insert(function.to_string(), s.clone());
        s
    }

    /// The BTF id of the type a script names (`struct point`, `tag_t`), a definition
    /// rather than a declaration when the object has one; None if its DWARF has none.
    pub(crate) fn named(&mut self, tag: Tag, name: &str) -> Option<TypeId> {
        if self.named.is_none() {
            self.named = Some(self.index_types());
        }
        let die = *self.named.as_ref()?.get(&(tag, name.to_string()))?;
        Some(self.convert(die, 0))
    }

    /// Every unit's top-level named types, by kind and name; a definition replaces a
    /// declaration (`struct rec;`) met first.
    fn index_types(&self) -> HashMap<(Tag, String), Die> {
        let mut index: HashMap<(Tag, String), Die> = HashMap::new();
        for u in 0..self.headers.len() {
            let Some(unit) = self.unit(u) else { continue };
            let Ok(mut tree) = unit.entries_tree(None) else {
                continue;
            };
            let Ok(root) = tree.root() else { continue };
            let mut children = root.children();
            while let Ok(Some(child)) = children.next() {
                let entry = child.entry();
                let tag = match entry.tag() {
                    gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => Tag::Struct,
                    gimli::DW_TAG_union_type => Tag::Union,
                    gimli::DW_TAG_enumeration_type => Tag::Enum,
                    gimli::DW_TAG_typedef => Tag::Typedef,
                    _ => continue,
                };
                let name = entry.attr_value(gimli::DW_AT_name).ok().flatten();
                let Some(name) = self.string(unit, name) else {
                    continue;
                };
                let die = (u, entry.offset());
                let declaration = |d: Die| self.has(d, gimli::DW_AT_declaration);
                match index.entry((tag, name)) {
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(die);
                    }
                    std::collections::hash_map::Entry::Occupied(mut o) => {
                        if declaration(*o.get()) && !declaration(die) {
                            o.insert(die);
                        }
                    }
                }
            }
        }
        index
    }

    fn convert_function(&mut self, function: &str) -> Option<(Vec<TypeId>, TypeId)> {
        // The code at the symbol's address is the function (whatever name DWARF gives it:
        // `fclose` is `_IO_new_fclose`), found in the unit `.debug_aranges` says holds
        // it; else an entry of that name (every function indexed once), the definition
        // (code of its own) first, as a declaration may name the parameters only.
        let address = self.addresses.get(function).copied();
        let die = match address.and_then(|a| self.at_address(a)) {
            Some(die) => die,
            None => {
                if self.functions.is_none() {
                    self.functions = Some(self.index_functions());
                }
                let index = self.functions.as_ref()?;
                if let Some(&die) = address.and_then(|a| index.by_address.get(&a)) {
                    return self.convert_signature(die);
                }
                let candidates = index.by_name.get(function)?;
                candidates
                    .iter()
                    .copied()
                    .find(|&d| self.has(d, gimli::DW_AT_low_pc) || self.has(d, gimli::DW_AT_ranges))
                    .or_else(|| candidates.first().copied())?
            }
        };
        self.convert_signature(die)
    }

    /// The types of the parameters and result of function entry `die`, converted.
    fn convert_signature(&mut self, die: Die) -> Option<(Vec<TypeId>, TypeId)> {
        let ret = match self.type_ref(die) {
            Some(t) => self.convert(t, 0),
            None => 0,
        };
        let mut params = Vec::new();
        for (tag, child) in self.children(die) {
            if tag == gimli::DW_TAG_unspecified_parameters {
                break;
            }
            if tag != gimli::DW_TAG_formal_parameter {
                continue;
            }
            let ty = match self.type_ref(child) {
                Some(t) => self.convert(t, 0),
                None => return None,
            };
            params.push(ty);
        }
        Some((params, ret))
    }

    /// The definition of the function whose code starts at `address`, looked for in the
    /// unit `.debug_aranges` gives for it.
    fn at_address(&self, address: u64) -> Option<Die> {
        let mut headers = self.dwarf.debug_aranges.headers();
        while let Ok(Some(header)) = headers.next() {
            let mut entries = header.entries();
            while let Ok(Some(entry)) = entries.next() {
                let range = entry.range();
                if !(range.begin..range.end).contains(&address) {
                    continue;
                }
                let offset = gimli::UnitSectionOffset::DebugInfoOffset(header.debug_info_offset());
                let u = self.headers.iter().position(|h| h.offset() == offset)?;
                let mut found = None;
                self.each_function(u, |die, _, starts| {
                    if starts.contains(&address) && found.is_none() {
                        found = Some(die);
                    }
                });
                return found;
            }
        }
        None
    }

    /// Every function's entries, by name and by address.
    fn index_functions(&self) -> Functions {
        let mut index = Functions::default();
        for u in 0..self.headers.len() {
            self.each_function(u, |die, names, starts| {
                for name in names {
                    index.by_name.entry(name).or_default().push(die);
                }
                for pc in starts {
                    index.by_address.entry(pc).or_insert(die);
                }
            });
        }
        index
    }

    /// Calls `f` with each function entry of unit `u`, its names (DWARF name, linkage
    /// name, and for C++ the name nested in its namespaces and classes, `ns::handle`, as
    /// `pid` probes name demangled functions) and where its code starts: its `low_pc`, or
    /// for a function in pieces (`DW_AT_ranges`: gcc moves cold code out as `name.cold`)
    /// where each piece starts, its symbol's address among them.
    fn each_function(&self, u: usize, mut f: impl FnMut(Die, Vec<String>, Vec<u64>)) {
        let Some(unit) = self.unit(u) else { return };
        let mut cursor = unit.entries();
        // The names of the scopes around the entry, by depth.
        let mut scopes: Vec<(isize, String)> = Vec::new();
        let mut depth = 0;
        while let Ok(Some((delta, entry))) = cursor.next_dfs() {
            depth += delta;
            while scopes.last().is_some_and(|(d, _)| *d >= depth) {
                scopes.pop();
            }
            let name = self.string(unit, entry.attr_value(gimli::DW_AT_name).ok().flatten());
            match entry.tag() {
                gimli::DW_TAG_namespace
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type => {
                    if let Some(name) = name {
                        scopes.push((depth, name));
                    }
                    continue;
                }
                gimli::DW_TAG_subprogram => {}
                _ => continue,
            }
            let linkage = entry.attr_value(gimli::DW_AT_linkage_name).ok().flatten();
            let mut names: Vec<String> = name.iter().cloned().collect();
            names.extend(self.string(unit, linkage));
            if let (Some(name), false) = (name, scopes.is_empty()) {
                let mut nested: Vec<&str> = scopes.iter().map(|(_, s)| s.as_str()).collect();
                nested.push(&name);
                names.push(nested.join("::"));
            }
            let low_pc = entry.attr_value(gimli::DW_AT_low_pc).ok().flatten();
            let mut starts: Vec<u64> = low_pc
                .and_then(|v| self.dwarf.attr_address(unit, v).ok().flatten())
                .into_iter()
                .collect();
            if starts.is_empty() {
                if let Ok(mut ranges) = self.dwarf.die_ranges(unit, entry) {
                    while let Ok(Some(r)) = ranges.next() {
                        starts.push(r.begin);
                    }
                }
            }
            f((u, entry.offset()), names, starts);
        }
    }

    /// Unit `u`, parsed on first use (None if it cannot be).
    fn unit(&self, u: usize) -> Option<&gimli::Unit<R>> {
        self.units
            .get(u)?
            .get_or_init(|| self.dwarf.unit(self.headers[u]).ok())
            .as_ref()
    }

    /// The BTF id of the type entry `die`, converting it (and what it needs) on first use.
    fn convert(&mut self, die: Die, depth: usize) -> TypeId {
        if let Some(&id) = self.converted.get(&die) {
            return id;
        }
        if depth > MAX_DEPTH {
            return 0;
        }
        let Some(tag) = self.tag(die) else { return 0 };
        let name = self.name(die).unwrap_or_default();
        let target = |me: &mut Self| match me.type_ref(die) {
            Some(t) => me.convert(t, depth + 1),
            None => 0,
        };
        let kind = match tag {
            gimli::DW_TAG_base_type => base_type(
                self.udata(die, gimli::DW_AT_byte_size).unwrap_or(0) as u32,
                match self.attr(die, gimli::DW_AT_encoding) {
                    Some(AttributeValue::Encoding(ate)) => ate,
                    _ => gimli::DwAte(0),
                },
            ),
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type => TypeKind::Ptr(target(self)),
            gimli::DW_TAG_const_type => TypeKind::Const(target(self)),
            gimli::DW_TAG_volatile_type => TypeKind::Volatile(target(self)),
            gimli::DW_TAG_restrict_type | gimli::DW_TAG_atomic_type => {
                TypeKind::Restrict(target(self))
            }
            gimli::DW_TAG_typedef => {
                let id = self.placeholder(die, &name);
                let t = target(self);
                self.btf.set(id, TypeKind::Typedef(t));
                return id;
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type | gimli::DW_TAG_union_type => {
                return self.record(die, tag, &name, depth)
            }
            gimli::DW_TAG_enumeration_type => self.enumeration(die),
            gimli::DW_TAG_array_type => return self.array(die, depth),
            gimli::DW_TAG_subroutine_type => {
                let id = self.placeholder(die, "");
                let ret = target(self);
                let mut params = Vec::new();
                for (tag, child) in self.children(die) {
                    if tag == gimli::DW_TAG_formal_parameter {
                        let ty = self
                            .type_ref(child)
                            .map_or(0, |t| self.convert(t, depth + 1));
                        params.push(Param {
                            name: Default::default(),
                            ty,
                        });
                    }
                }
                self.btf
                    .set(id, TypeKind::FuncProto(FuncProto { ret, params }));
                return id;
            }
            // Anything else (a pointer to member, `decltype(nullptr)`) is opaque.
            _ => TypeKind::Fwd { union: false },
        };
        let id = self.btf.push(&name, kind);
        self.converted.insert(die, id);
        id
    }

    /// A type id for `die` before its contents are converted (they may refer to it).
    fn placeholder(&mut self, die: Die, name: &str) -> TypeId {
        let id = self.btf.push(name, TypeKind::Fwd { union: false });
        self.converted.insert(die, id);
        id
    }

    fn record(&mut self, die: Die, tag: DwTag, name: &str, depth: usize) -> TypeId {
        let union = tag == gimli::DW_TAG_union_type;
        let id = self.placeholder(die, name);
        if self.has(die, gimli::DW_AT_declaration) {
            self.btf.set(id, TypeKind::Fwd { union });
            return id;
        }
        let size = self.udata(die, gimli::DW_AT_byte_size).unwrap_or(0) as u32;
        let mut members = Vec::new();
        for (tag, child) in self.children(die) {
            let base_class = tag == gimli::DW_TAG_inheritance;
            if (tag != gimli::DW_TAG_member && !base_class)
                || self.has(child, gimli::DW_AT_external)
                || self.has(child, gimli::DW_AT_declaration)
            {
                continue;
            }
            let Some(t) = self.type_ref(child) else {
                continue;
            };
            let ty = self.convert(t, depth + 1);
            let byte = self
                .udata(child, gimli::DW_AT_data_member_location)
                .unwrap_or(0);
            let width = self.udata(child, gimli::DW_AT_bit_size).unwrap_or(0);
            let bit = match self.udata(child, gimli::DW_AT_data_bit_offset) {
                Some(bit) => bit,
                // DWARF 2-3: bits from the top of the storage unit at the location.
                None => match self.udata(child, gimli::DW_AT_bit_offset) {
                    Some(from_top) => {
                        let unit = self
                            .udata(child, gimli::DW_AT_byte_size)
                            .unwrap_or(width.div_ceil(8));
                        byte * 8 + (unit * 8).saturating_sub(from_top + width)
                    }
                    None => byte * 8,
                },
            };
            let member_name = if base_class {
                String::new()
            } else {
                self.name(child).unwrap_or_default()
            };
            members.push(Member {
                name: self.btf.name(&member_name),
                ty,
                bit_offset: u32::try_from(bit).unwrap_or(u32::MAX),
                bitfield_size: u8::try_from(width).unwrap_or(0),
            });
        }
        let c = Composite { size, members };
        self.btf.set(
            id,
            if union {
                TypeKind::Union(c)
            } else {
                TypeKind::Struct(c)
            },
        );
        id
    }

    fn enumeration(&mut self, die: Die) -> TypeKind {
        let size = self.udata(die, gimli::DW_AT_byte_size).unwrap_or(4) as u32;
        let mut values = Vec::new();
        for (tag, child) in self.children(die) {
            if tag != gimli::DW_TAG_enumerator {
                continue;
            }
            let value = match self.attr(child, gimli::DW_AT_const_value) {
                Some(AttributeValue::Sdata(v)) => v,
                Some(v) => v.udata_value().map_or(0, |v| v as i64),
                None => 0,
            };
            let name = self.name(child).unwrap_or_default();
            values.push(Enumerator {
                name: self.btf.name(&name),
                value,
            });
        }
        let signed = values.iter().any(|v| v.value < 0);
        TypeKind::Enum(Enum {
            size,
            signed,
            values,
        })
    }

    /// An array: one BTF array per dimension, the last dimension innermost.
    fn array(&mut self, die: Die, depth: usize) -> TypeId {
        let id = self.placeholder(die, "");
        let mut lens = Vec::new();
        for (tag, child) in self.children(die) {
            if tag != gimli::DW_TAG_subrange_type {
                continue;
            }
            let len = match self.udata(child, gimli::DW_AT_count) {
                Some(n) => n,
                None => self
                    .udata(child, gimli::DW_AT_upper_bound)
                    .map_or(0, |upper| upper + 1),
            };
            lens.push(u32::try_from(len).unwrap_or(0));
        }
        let mut elem = self.type_ref(die).map_or(0, |t| self.convert(t, depth + 1));
        let outer = lens.first().copied().unwrap_or(0);
        for &len in lens.iter().skip(1).rev() {
            elem = self.btf.push(
                "",
                TypeKind::Array(Array {
                    elem,
                    index: 0,
                    len,
                }),
            );
        }
        self.btf.set(
            id,
            TypeKind::Array(Array {
                elem,
                index: 0,
                len: outer,
            }),
        );
        id
    }

    fn children(&self, (u, offset): Die) -> Vec<(DwTag, Die)> {
        let mut out = Vec::new();
        let Some(Ok(mut tree)) = self.unit(u).map(|unit| unit.entries_tree(Some(offset))) else {
            return out;
        };
        let Ok(root) = tree.root() else { return out };
        let mut children = root.children();
        while let Ok(Some(child)) = children.next() {
            out.push((child.entry().tag(), (u, child.entry().offset())));
        }
        out
    }

    fn tag(&self, (u, offset): Die) -> Option<DwTag> {
        self.unit(u)?.entry(offset).ok().map(|e| e.tag())
    }

    /// Attribute `at` of `die`, or of the entry it completes (`DW_AT_abstract_origin`,
    /// `DW_AT_specification`).
    fn attr(&self, die: Die, at: gimli::DwAt) -> Option<AttributeValue<R>> {
        let mut die = die;
        for _ in 0..4 {
            let entry = self.unit(die.0)?.entry(die.1).ok()?;
            if let Some(v) = entry.attr_value(at).ok().flatten() {
                return Some(v);
            }
            let origin = entry
                .attr_value(gimli::DW_AT_abstract_origin)
                .ok()
                .flatten()
                .or_else(|| entry.attr_value(gimli::DW_AT_specification).ok().flatten())?;
            die = self.reference(die.0, origin)?;
        }
        None
    }

    fn has(&self, die: Die, at: gimli::DwAt) -> bool {
        self.unit(die.0)
            .and_then(|unit| unit.entry(die.1).ok())
            .is_some_and(|e| e.attr_value(at).ok().flatten().is_some())
    }

    fn udata(&self, die: Die, at: gimli::DwAt) -> Option<u64> {
        match self.attr(die, at)? {
            AttributeValue::Sdata(v) => u64::try_from(v).ok(),
            v => v.udata_value(),
        }
    }

    fn name(&self, die: Die) -> Option<String> {
        self.string(self.unit(die.0)?, self.attr(die, gimli::DW_AT_name))
    }

    fn string(&self, unit: &gimli::Unit<R>, v: Option<AttributeValue<R>>) -> Option<String> {
        let s = self.dwarf.attr_string(unit, v?).ok()?;
        Some(String::from_utf8_lossy(s.slice()).into_owned())
    }

    /// The entry `DW_AT_type` of `die` refers to.
    fn type_ref(&self, die: Die) -> Option<Die> {
        let v = self.attr(die, gimli::DW_AT_type)?;
        self.reference(die.0, v)
    }

    /// The entry a reference attribute of an entry of unit `u` names.
    fn reference(&self, u: usize, v: AttributeValue<R>) -> Option<Die> {
        match v {
            AttributeValue::UnitRef(offset) => Some((u, offset)),
            AttributeValue::DebugInfoRef(offset) => self
                .headers
                .iter()
                .enumerate()
                .find_map(|(i, header)| offset.to_unit_offset(header).map(|o| (i, o))),
            _ => None,
        }
    }
}

/// Where the functions' entries are.
#[derive(Default)]
struct Functions {
    /// By DWARF name and linkage name.
    by_name: HashMap<String, Vec<Die>>,
    /// Definitions by the address of their code.
    by_address: HashMap<u64, Die>,
}

/// A base type by its size and `DW_ATE_*` encoding.
fn base_type(size: u32, ate: gimli::DwAte) -> TypeKind {
    if matches!(
        ate,
        gimli::DW_ATE_float | gimli::DW_ATE_complex_float | gimli::DW_ATE_decimal_float
    ) {
        return TypeKind::Float { size };
    }
    TypeKind::Int(Int {
        size,
        signed: matches!(ate, gimli::DW_ATE_signed | gimli::DW_ATE_signed_char),
        char: matches!(ate, gimli::DW_ATE_signed_char | gimli::DW_ATE_unsigned_char),
        bool: ate == gimli::DW_ATE_boolean,
        bit_offset: 0,
        bits: (size * 8).min(128) as u8,
    })
}

/// Whether types and functions are read from section `id` (not locations, call frames,
/// macros: reading, and above all unpacking, them would be wasted; a unit needs its line
/// table's header).
fn needed(id: gimli::SectionId) -> bool {
    use gimli::SectionId as S;
    matches!(
        id,
        S::DebugInfo
            | S::DebugAbbrev
            | S::DebugLine
            | S::DebugStr
            | S::DebugLineStr
            | S::DebugStrOffsets
            | S::DebugAddr
            | S::DebugAranges
            | S::DebugRanges
            | S::DebugRngLists
    )
}

/// `Elf64_Chdr`'s `ch_type` of zlib- and zstd-compressed data.
const ELFCOMPRESS_ZLIB: u32 = 1;
const ELFCOMPRESS_ZSTD: u32 = 2;
/// The most bytes a compressed section may unpack to.
const MAX_SECTION: u64 = 1 << 32;

/// The bytes of section `s` of `elf` (whose bytes live as long as the process),
/// uncompressed if they are (`SHF_COMPRESSED` with zlib or zstd, as distributions ship
/// debug files; the uncompressed copy is kept for the rest of the process too).
fn section_bytes(
    elf: &dtrace_elf::Elf<'static>,
    s: &dtrace_elf::Section,
) -> Result<&'static [u8], String> {
    let data = elf.section_data(s).map_err(|e| e.0)?;
    if s.flags & dtrace_elf::SHF_COMPRESSED == 0 {
        return Ok(data);
    }
    let bad = || format!("{}: a compressed section that cannot be read", s.name);
    let kind = dtrace_elf::u32_at(data, 0).map_err(|_| bad())?;
    let size = dtrace_elf::u64_at(data, 8).map_err(|_| bad())?;
    if size > MAX_SECTION {
        return Err(bad());
    }
    let packed = data.get(24..).ok_or_else(bad)?;
    let bytes = match kind {
        ELFCOMPRESS_ZLIB => {
            miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(packed, size as usize)
                .map_err(|_| bad())?
        }
        ELFCOMPRESS_ZSTD => {
            use std::io::Read;
            let decoder = ruzstd::decoding::StreamingDecoder::new(packed).map_err(|_| bad())?;
            let mut bytes = Vec::with_capacity(size as usize);
            decoder
                .take(size)
                .read_to_end(&mut bytes)
                .map_err(|_| bad())?;
            bytes
        }
        _ => {
            return Err(format!(
                "{} is compressed in a way not supported (type {kind}; zlib and zstd are)",
                s.name
            ))
        }
    };
    if bytes.len() as u64 != size {
        return Err(bad());
    }
    Ok(Box::leak(bytes.into_boxed_slice()))
}

/// The bytes of the file at `path`, kept for the rest of the process (the DWARF read from
/// them is).
fn read(path: &Path) -> Result<&'static [u8], String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Box::leak(bytes.into_boxed_slice()))
}
