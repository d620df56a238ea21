//! USDT providers built the DTrace way: a provider file (`provider p { probe x(int a); };`)
//! becomes a C header (`dtrace -h`, [`header`]) and, at link time, an object holding the
//! probes' is-enabled semaphores and argument types (`dtrace -G`, [`link`]); the probe
//! sites themselves are `.note.stapsdt` notes (systemtap's `sys/sdt.h` format), so any
//! tool that reads those sees the probes.
//!
//! - [`providers`] turns parsed provider definitions into [`ProviderDef`]s: probe names,
//!   native argument types (what the program passes), translated types (`args[]` in D)
//!   and the mapping from one to the other.
//! - [`typenote`] is the note (`.note.dtrace`, owner `dtrace`) in which `-G` records those
//!   types for the tracer: `.note.stapsdt` has operand sizes only.
//! - [`ctype`] knows the size and signedness of the C types a provider names, which the
//!   header's casts and the operand specs of rewritten call sites need.
//!
//! Without the default `files` feature only the probe model, [`ctype`] and [`typenote`]
//! are built (no parser, no object writer): what a library defining probes at run time
//! needs.

pub mod ctype;
#[cfg(feature = "files")]
pub mod header;
#[cfg(feature = "files")]
pub mod link;
pub mod typenote;

#[cfg(feature = "files")]
use dtrace_frontend::ast::{Item, ProbeParam, Provider};

/// A provider as declared in a provider file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderDef {
    pub name: String,
    pub probes: Vec<ProbeDef>,
}

/// One probe of a provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeDef {
    /// As declared (`foo__bar`: `foo-bar` in D, `FOO_BAR` in the header's macros).
    pub name: String,
    /// The C types of the arguments the program passes.
    pub native: Vec<String>,
    /// The D types of `args[]` (the native types when no translation is declared).
    pub translated: Vec<String>,
    /// For each translated argument, the index of the native argument it is made from.
    pub mapping: Vec<usize>,
}

impl ProbeDef {
    /// The probe's name as D spells it: `__` is `-`.
    pub fn d_name(&self) -> String {
        self.name.replace("__", "-")
    }
}

/// The providers `items` define, in order.
#[cfg(feature = "files")]
pub fn providers(items: &[Item]) -> Vec<ProviderDef> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Provider(p) => Some(provider(p)),
            _ => None,
        })
        .collect()
}

#[cfg(feature = "files")]
fn provider(p: &Provider) -> ProviderDef {
    let probes = p
        .probes
        .iter()
        .map(|probe| {
            let types = |params: &[ProbeParam]| -> Vec<String> {
                params.iter().map(|a| a.ty.c_text()).collect()
            };
            let native = types(&probe.native);
            let (translated, mapping) = match &probe.translated {
                None => (native.clone(), (0..native.len()).collect()),
                Some(out) => {
                    // A named output argument is the input argument of that name (the
                    // parser checked it exists); an unnamed one is the input at its position.
                    let mapping = out
                        .iter()
                        .enumerate()
                        .map(|(i, a)| {
                            a.name
                                .as_ref()
                                .and_then(|n| {
                                    probe.native.iter().position(|q| q.name.as_ref() == Some(n))
                                })
                                .unwrap_or(i)
                        })
                        .collect();
                    (types(out), mapping)
                }
            };
            ProbeDef {
                name: probe.name.clone(),
                native,
                translated,
                mapping,
            }
        })
        .collect();
    ProviderDef {
        name: p.name.clone(),
        probes,
    }
}

/// The symbol of probe `provider:probe`'s is-enabled semaphore, which the header's
/// `_ENABLED()` macro reads and the `-G` object defines (a hidden `u16` in `.probes`):
/// systemtap's name for it (`PROVIDER_PROBE_semaphore`), so headers that systemtap's
/// `dtrace -h` wrote link with our `-G` object too.
pub fn semaphore_symbol(provider: &str, probe: &str) -> String {
    format!("{provider}_{probe}_semaphore")
}

#[cfg(all(test, feature = "files"))]
mod tests {
    use super::*;
    use dtrace_frontend::{parse, Origin, Source};

    pub(crate) fn defs(text: &str) -> Vec<ProviderDef> {
        let source = Source::new(Origin::Script("prov.d".into()), text.to_string());
        let program = parse(&source, 0, &|n| n.ends_with("_t")).expect("parses");
        providers(&program.items)
    }

    #[test]
    fn mapping_follows_names() {
        let p = defs(
            "provider test_prov { probe place(int i, int j) : (int j, int i, int i, int j); probe go(); };",
        );
        assert_eq!(p[0].name, "test_prov");
        let place = &p[0].probes[0];
        assert_eq!(place.native, ["int", "int"]);
        assert_eq!(place.translated.len(), 4);
        assert_eq!(place.mapping, [1, 0, 0, 1]);
        assert!(p[0].probes[1].native.is_empty());
        assert_eq!(semaphore_symbol("p", "x__y"), "p_x__y_semaphore");
    }
}
