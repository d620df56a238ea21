//! Definitions a traced binary carries: the D types and translators of its probes'
//! arguments, shipped in the binary itself (docs/TRANSLATORS.md), so the version running is
//! translated by its own definitions.
//!
//! Each distinct binary source is typed once, before the program, into a layer of its own
//! (its struct, union, enum and typedef names, and its translators); the clause bodies on
//! that binary's probes see the layer over the program's names, and no other body sees
//! it. Two versions of a library defining the same names differently thus co-exist: each
//! version's probes are translated by its own definitions.

use std::collections::HashMap;

use dtrace_frontend::ast::{self, Item, StorageClass};
use dtrace_frontend::{CompileError, Result};

use super::decl::Defs;
use super::xlate::{Translators, Xlator};
use super::Cook;
use crate::types::translators::Provided;

/// What one traced binary defines in D, and the probes it is for.
#[derive(Clone, Debug)]
pub struct BinaryDefs {
    /// Its D source's items: declarations of types and translators only.
    pub items: Vec<Item>,
    /// The ids of the probes (of the program's clauses) in that binary.
    pub sites: Vec<u32>,
}

/// A binary's definitions, typed.
pub(crate) struct Layer {
    defs: Defs,
    xlators: Vec<Xlator>,
}

/// The binaries' layers and which probe sees which.
#[derive(Default)]
pub(crate) struct Layers {
    list: Vec<Layer>,
    by_site: HashMap<u32, usize>,
    /// The layer of the body being typed.
    active: Option<usize>,
}

impl Cook<'_> {
    /// Type each binary's definitions into its layer.
    pub(crate) fn load_binaries(&mut self, binaries: &[BinaryDefs]) -> Result<()> {
        for b in binaries {
            let provided: Vec<Provided> = b
                .items
                .iter()
                .filter_map(|item| match item {
                    Item::Translator(t) => Some(Provided {
                        def: t.clone(),
                        eager: true,
                    }),
                    _ => None,
                })
                .collect();
            let global_defs = std::mem::take(&mut self.defs);
            let global_xlators = std::mem::replace(&mut self.xlators, Translators::new(&provided));
            let typed = self.binary_items(&b.items);
            let defs = std::mem::replace(&mut self.defs, global_defs);
            let mut own = std::mem::replace(&mut self.xlators, global_xlators);
            typed?;
            let index = self.layers.list.len();
            self.layers.list.push(Layer {
                defs,
                xlators: own.take(),
            });
            for site in &b.sites {
                self.layers.by_site.insert(*site, index);
            }
        }
        Ok(())
    }

    /// Declare a binary's types and check its translators.
    fn binary_items(&mut self, items: &[Item]) -> Result<()> {
        for item in items {
            match item {
                Item::Decl(d) if declares_types_only(d) => self.declare(d)?,
                Item::Translator(t) => self.check_translator(t)?,
                // A provider file shipped whole: its providers are the notes' business.
                Item::Pragma(_) | Item::Provider(_) => {}
                other => {
                    return Err(CompileError::new(
                        "D_BINARY_ITEM",
                        "a binary's D source may only declare types, translators and providers",
                        item_span(other),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Run `f` (typing a body for probe `site`) with that probe's binary's definitions
    /// visible, if it has some.
    pub(crate) fn with_binary<R>(&mut self, site: u32, f: impl FnOnce(&mut Self) -> R) -> R {
        let Some(&layer) = self.layers.by_site.get(&site) else {
            return f(self);
        };
        let own = std::mem::take(&mut self.layers.list[layer].xlators);
        let base = self.xlators.push_layer(own);
        self.layers.active = Some(layer);
        let r = f(self);
        self.layers.active = None;
        self.layers.list[layer].xlators = self.xlators.pop_layer(base);
        r
    }

    /// The type names of the binary whose probe's body is being typed.
    pub(crate) fn binary_defs(&self) -> Option<&Defs> {
        self.layers.active.map(|i| &self.layers.list[i].defs)
    }
}

/// Whether `d` declares types (a struct, union or enum, or typedefs), not variables.
fn declares_types_only(d: &ast::Decl) -> bool {
    d.class == Some(StorageClass::Typedef) || (d.class.is_none() && d.declarators.is_empty())
}

fn item_span(item: &Item) -> dtrace_frontend::Span {
    match item {
        Item::Clause(c) => c.span,
        Item::Decl(d) => d.span,
        Item::Inline(i) => i.span,
        Item::Translator(t) => t.span,
        Item::Pragma(p) => p.span,
        Item::Provider(p) => p.span,
    }
}
