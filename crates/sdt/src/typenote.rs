//! The argument types of a provider's probes, as `dtrace -G` records them in the program:
//! `.note.stapsdt` notes give each site's operands but not their C types, nor DTrace's
//! translated arguments (`probe x(int a, int b) : (int b, int a)`). So the `-G` object
//! carries one ELF note per probe in a non-allocated `SHT_NOTE` section [`SECTION`]
//! (owner `dtrace`, type [`NT_PROBE_TYPES`]), which the linker concatenates with those of
//! other objects and the tracer reads beside the stapsdt notes.
//!
//! A note's descriptor is a list of NUL-terminated strings: the provider, the probe name
//! (as declared, `__` not yet `-`), the number of native arguments and their types, the
//! number of translated arguments, their types, and for each the index of the native
//! argument it comes from.
//!
//! A note of type [`NT_D_SOURCE`] in the same section carries D source text: the types and
//! translators of the binary's stable arguments, which `dtrace` loads for the clauses on
//! that binary's probes (docs/TRANSLATORS.md). Its descriptor is the text, NUL-terminated
//! (padding NULs after it are not part of it); a binary may hold several.

use crate::{ProbeDef, ProviderDef};

/// The section holding the notes.
pub const SECTION: &str = ".note.dtrace";
/// The notes' owner.
pub const OWNER: &str = "dtrace";
/// The type of the notes of probes' types.
pub const NT_PROBE_TYPES: u32 = 1;
/// The type of the notes of D source (types and translators).
pub const NT_D_SOURCE: u32 = 2;

/// One probe's declared types, read back from a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeTypes {
    pub provider: String,
    pub probe: ProbeDef,
}

/// The section contents for `providers`: one note per probe.
pub fn encode(providers: &[ProviderDef]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in providers {
        for probe in &p.probes {
            let mut fields = vec![p.name.clone(), probe.name.clone()];
            fields.push(probe.native.len().to_string());
            fields.extend(probe.native.iter().cloned());
            fields.push(probe.translated.len().to_string());
            fields.extend(probe.translated.iter().cloned());
            fields.extend(probe.mapping.iter().map(ToString::to_string));
            let mut desc = Vec::new();
            for f in fields {
                desc.extend_from_slice(f.as_bytes());
                desc.push(0);
            }
            note(&mut out, NT_PROBE_TYPES, &desc);
        }
    }
    out
}

/// A note of D source `text`, for the section.
pub fn encode_source(text: &str) -> Vec<u8> {
    let mut desc = text.as_bytes().to_vec();
    desc.push(0);
    let mut out = Vec::new();
    note(&mut out, NT_D_SOURCE, &desc);
    out
}

fn note(out: &mut Vec<u8>, ty: u32, desc: &[u8]) {
    let name = format!("{OWNER}\0");
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    out.extend_from_slice(&ty.to_le_bytes());
    for part in [name.as_bytes(), desc] {
        out.extend_from_slice(part);
        out.resize(out.len().next_multiple_of(4), 0);
    }
}

/// The probes' types in a `.note.dtrace` section (ill-formed notes are skipped).
pub fn decode(section: &[u8]) -> Vec<ProbeTypes> {
    notes(section, NT_PROBE_TYPES)
        .filter_map(probe_types)
        .collect()
}

/// The D source texts in a `.note.dtrace` section, in order.
pub fn decode_sources(section: &[u8]) -> Vec<String> {
    notes(section, NT_D_SOURCE).map(source_text).collect()
}

/// The D source text of one [`NT_D_SOURCE`] note's descriptor.
pub fn source_text(desc: &[u8]) -> String {
    let text = desc.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8_lossy(text).into_owned()
}

/// The descriptors of the section's notes of owner [`OWNER`] and type `ty`; the walk
/// stops at the first ill-formed note.
fn notes(section: &[u8], ty: u32) -> impl Iterator<Item = &[u8]> {
    let word = |at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(section.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let (namesz, descsz, kind) = (word(at)?, word(at + 4)?, word(at + 8)?);
        let name_at = at + 12;
        let desc_at = name_at.checked_add(namesz.next_multiple_of(4))?;
        let end = desc_at.checked_add(descsz.next_multiple_of(4))?;
        let name = section.get(name_at..name_at + namesz)?;
        let desc = section.get(desc_at..desc_at + descsz)?;
        at = end;
        Some((name == format!("{OWNER}\0").as_bytes() && kind as u32 == ty).then_some(desc))
    })
    .flatten()
}

/// The types of one [`NT_PROBE_TYPES`] note's descriptor (`None` if ill-formed).
pub fn probe_types(desc: &[u8]) -> Option<ProbeTypes> {
    let mut fields = desc
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let provider = fields.next()?;
    let name = fields.next()?;
    let n: usize = fields.next()?.parse().ok()?;
    let native: Vec<String> = fields.by_ref().take(n).collect();
    let m: usize = fields.next()?.parse().ok()?;
    let translated: Vec<String> = fields.by_ref().take(m).collect();
    let mapping: Vec<usize> = fields
        .by_ref()
        .take(m)
        .map(|f| f.parse().ok().filter(|&i: &usize| i < n))
        .collect::<Option<_>>()?;
    (native.len() == n && translated.len() == m && mapping.len() == m).then_some(ProbeTypes {
        provider,
        probe: ProbeDef {
            name,
            native,
            translated,
            mapping,
        },
    })
}

#[cfg(all(test, feature = "files"))]
mod tests {
    use super::*;
    use crate::tests::defs;

    #[test]
    fn round_trip() {
        let p = defs(
            "provider a { probe x(int i, char *s) : (char *s, int i); probe y(); }; provider b { probe z(uint64_t); };",
        );
        let notes = decode(&encode(&p));
        assert_eq!(notes.len(), 3);
        assert_eq!(notes[0].provider, "a");
        assert_eq!(notes[0].probe, p[0].probes[0]);
        assert_eq!(notes[1].probe, p[0].probes[1]);
        assert_eq!(notes[2].provider, "b");
        assert_eq!(notes[2].probe.native, ["uint64_t"]);
    }

    #[test]
    fn sources_beside_types() {
        let p = defs("provider a { probe x(int i); };");
        let mut section = encode_source("struct s { int a; };");
        section.extend(encode(&p));
        section.extend(encode_source("translator t < int x > { a = x; };"));
        assert_eq!(
            decode_sources(&section),
            ["struct s { int a; };", "translator t < int x > { a = x; };"]
        );
        assert_eq!(decode(&section).len(), 1);
    }
}
