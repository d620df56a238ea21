//! The D definitions traced binaries carry (docs/TRANSLATORS.md): the D source in the
//! `.note.dtrace` notes of each binary whose probes a clause is enabled on, parsed once per
//! distinct text (two processes of one version share it), with the probes it is for. The
//! typing pass gives each its own scope (`dtrace_typing::cook::BinaryDefs`).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use dtrace_frontend::{Origin, Source};
use dtrace_probes::{Attach, Probe};
use dtrace_typing::cook::BinaryDefs;

use crate::compile::Failure;

/// The definitions of the binaries of `probes`; their sources are added to `sources`
/// (for messages), numbered from its length.
pub fn read(
    probes: &HashMap<u32, Probe>,
    sources: &mut Vec<Source>,
) -> Result<Vec<BinaryDefs>, Failure> {
    let mut by_path: BTreeMap<PathBuf, Vec<u32>> = BTreeMap::new();
    for (id, p) in probes {
        if let Attach::User(u) = &p.attach {
            by_path.entry(u.path.clone()).or_default().push(*id);
        }
    }
    // Text -> (the first binary carrying it, the probes of every binary carrying it).
    let mut by_text: BTreeMap<String, (PathBuf, Vec<u32>)> = BTreeMap::new();
    for (path, mut ids) in by_path {
        // A binary that cannot be read again carries nothing more than its probes showed.
        let texts = dtrace_probes::usdt::read_d_sources(&path).unwrap_or_default();
        if texts.is_empty() {
            continue;
        }
        let entry = by_text
            .entry(texts.join("\n"))
            .or_insert_with(|| (path, Vec::new()));
        entry.1.append(&mut ids);
    }
    let mut out = Vec::new();
    for (text, (path, mut sites)) in by_text {
        sites.sort_unstable();
        let source = Source::new(
            Origin::Script(format!("{} (its D source)", path.display())),
            text,
        );
        let index = sources.len() as u16;
        sources.push(source);
        let parsed = dtrace_frontend::parse(
            &sources[index as usize],
            index,
            &crate::compile::is_type_name,
        )
        .map_err(|e| Failure::Compile(e, sources.clone()))?;
        out.push(BinaryDefs {
            items: parsed.items,
            sites,
        });
    }
    Ok(out)
}
