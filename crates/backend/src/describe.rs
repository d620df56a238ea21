//! The consumer's description of a compiled program ([`ProgramDesc`]), built from what code
//! generation recorded about each enabled probe and aggregation: the one place where the back
//! end's D types ([`Type`]) become the record ABI's value descriptions ([`ValueType`]).
//!
//! Kernel types are described partially for now: a struct or union by its name and size
//! (no members: no record holds one by value yet), an enum with its constants when the
//! running kernel's BTF defines it.

use dtrace_abi::datum::{Datum, ValueType};
use dtrace_abi::desc as abi;

use crate::program::{
    ActionKind, Aggregation, EnabledProbe, Field, KeyStore, ProbeSite, SetoptArg,
};
use crate::types::{self, Type};

/// The description of `enabled` probes and `aggregations`; strings are `strsize` bytes.
pub(crate) fn describe(
    enabled: &[EnabledProbe],
    aggregations: &[Aggregation],
    strsize: u32,
) -> abi::ProgramDesc {
    let field = |f: &Field| match f.datum {
        Some(d) => symbolic(f.offset, d),
        None => abi::Field {
            offset: f.offset,
            ty: value_type(&f.ty, strsize),
        },
    };
    let probes = enabled
        .iter()
        .map(|ep| abi::EnabledProbe {
            epid: ep.epid,
            probe: probe(&ep.probe),
            records: ep.records,
            statement: ep.statement,
            actions: ep
                .actions
                .iter()
                .map(|a| abi::Action {
                    kind: action(&a.kind, &field),
                    presence: a.presence,
                })
                .collect(),
        })
        .collect();
    let aggregations = aggregations
        .iter()
        .map(|a| abi::Aggregation {
            name: a.name.clone(),
            func: a.kind,
            keys: a
                .keys
                .iter()
                .zip(&a.stores)
                .map(|(k, store)| match store {
                    KeyStore::Datum(d) => symbolic(k.offset, *d),
                    KeyStore::String(bound) => abi::Field {
                        offset: k.offset,
                        ty: ValueType::String {
                            size: bound.next_multiple_of(8),
                        },
                    },
                    KeyStore::Name(names) => abi::Field {
                        offset: k.offset,
                        ty: ValueType::Name {
                            names: names.names().to_vec(),
                        },
                    },
                    KeyStore::Value => field(k),
                })
                .collect(),
            key_size: a.key_size,
            slots: a.slots,
        })
        .collect();
    abi::ProgramDesc {
        probes,
        aggregations,
    }
}

fn probe(site: &ProbeSite) -> abi::Probe {
    abi::Probe {
        id: site.id,
        provider: site.provider.clone(),
        module: site.module.clone(),
        function: site.function.clone(),
        name: site.name.clone(),
    }
}

fn symbolic(offset: u32, datum: Datum) -> abi::Field {
    abi::Field {
        offset,
        ty: ValueType::Symbolic(datum),
    }
}

fn action(kind: &ActionKind, field: &impl Fn(&Field) -> abi::Field) -> abi::ActionKind {
    match kind {
        ActionKind::Trace(f) => abi::ActionKind::Trace(field(f)),
        ActionKind::Memory {
            offset,
            size,
            dynamic,
        } => abi::ActionKind::Trace(abi::Field {
            offset: *offset,
            ty: ValueType::Memory {
                size: *size,
                dynamic: *dynamic,
            },
        }),
        ActionKind::Datum { offset, datum } => abi::ActionKind::Trace(symbolic(*offset, *datum)),
        ActionKind::Print {
            offset,
            size,
            layout,
        } => abi::ActionKind::Print {
            offset: *offset,
            size: *size,
            layout: layout.clone(),
        },
        ActionKind::Printf { format, args } => abi::ActionKind::Printf {
            format: format.clone(),
            args: args.iter().map(field).collect(),
        },
        ActionKind::Printa {
            format,
            aggregations,
        } => abi::ActionKind::Printa {
            format: format.clone(),
            aggregations: aggregations.clone(),
        },
        ActionKind::Exit(f) => abi::ActionKind::Exit(field(f)),
        ActionKind::Clear(i) => abi::ActionKind::Clear(*i),
        ActionKind::Trunc { aggregation, count } => abi::ActionKind::Trunc {
            aggregation: *aggregation,
            count: count.as_ref().map(field),
        },
        ActionKind::Normalize {
            aggregation,
            factor,
        } => abi::ActionKind::Normalize {
            aggregation: *aggregation,
            factor: field(factor),
        },
        ActionKind::Denormalize(i) => abi::ActionKind::Denormalize(*i),
        ActionKind::Setopt { option, value } => {
            let arg = |a: &SetoptArg| match a {
                SetoptArg::Text(s) => abi::SetoptArg::Text(s.clone()),
                SetoptArg::Recorded(f) => abi::SetoptArg::Recorded(field(f)),
            };
            abi::ActionKind::Setopt {
                option: arg(option),
                value: value.as_ref().map(arg),
            }
        }
        ActionKind::System { format, args } => abi::ActionKind::System {
            format: format.clone(),
            args: args.iter().map(field).collect(),
        },
        ActionKind::Freopen { format, args } => abi::ActionKind::Freopen {
            format: format.clone(),
            args: args.iter().map(field).collect(),
        },
        ActionKind::Ftruncate => abi::ActionKind::Ftruncate,
        ActionKind::Speculate(f) => abi::ActionKind::Speculate(field(f)),
        ActionKind::Commit(f) => abi::ActionKind::Commit(field(f)),
        ActionKind::Discard(f) => abi::ActionKind::Discard(field(f)),
    }
}

/// The ABI's description of a value of D type `ty` (strings of `strsize` bytes).
fn value_type(ty: &Type, strsize: u32) -> ValueType {
    match ty {
        Type::Int { size, signed, name } => {
            types::integer_value_type(*size, *signed, name, types::kernel::enum_constants)
        }
        Type::Ptr(_) => ValueType::Pointer {
            name: ty.to_string(),
        },
        Type::String => ValueType::String { size: strsize },
        Type::Struct(r) => ValueType::Record {
            union: r.name.starts_with("union"),
            name: r.name.to_string(),
            size: r.size,
            members: Vec::new(),
        },
        Type::Array(element, len) => ValueType::Array {
            element: Box::new(value_type(element, strsize)),
            len: *len,
        },
        Type::Void | Type::Opaque(_) => ValueType::Bytes {
            size: ty.size() as u32,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_convert() {
        assert_eq!(
            value_type(&types::INT, 256),
            ValueType::Integer {
                size: 4,
                signed: true,
                name: "int".into()
            }
        );
        assert_eq!(
            value_type(&Type::String, 64),
            ValueType::String { size: 64 }
        );
        let p = Type::Ptr(Box::new(types::CHAR));
        assert_eq!(
            value_type(&p, 8),
            ValueType::Pointer {
                name: "char *".into()
            }
        );
        let arr = value_type(&Type::Array(Box::new(types::UINT), 4), 8);
        assert_eq!(arr.size(), 16);
        assert_eq!(arr.name(), "unsigned int [4]");
    }

    #[test]
    fn kernel_enums_carry_their_constants() {
        let Some(btf) = types::kernel::vmlinux() else {
            panic!("the kernel's BTF is needed: /sys/kernel/btf/vmlinux");
        };
        let ty =
            types::kernel::named(btf, types::kernel::Tag::Enum, "pid_type").expect("enum pid_type");
        let ValueType::Enum { constants, .. } = value_type(&ty, 8) else {
            panic!("{ty:?} is not described as an enum");
        };
        assert!(
            constants.contains(&("PIDTYPE_PID".to_string(), 0)),
            "{constants:?}"
        );
    }
}
