//! Provider definitions: probes, argument types as C spells them, translated arguments
//! and DTrace's errors.

use super::{error, program};
use crate::ast::{Item, Provider};

fn provider(text: &str) -> Provider {
    match program(text).items.into_iter().next() {
        Some(Item::Provider(p)) => p,
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn probes_and_argument_types() {
    let p = provider(
        "provider test_prov {
            probe go();
            probe v(void);
            probe place(int i, unsigned long j, char *s, struct in **pp, uint64_t) : (char *s, int i, int i);
            probe d__ash(char **, const char *);
        };",
    );
    assert_eq!(p.name, "test_prov");
    let names: Vec<&str> = p.probes.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["go", "v", "place", "d__ash"]);
    assert!(p.probes[0].native.is_empty() && p.probes[1].native.is_empty());
    let place = &p.probes[2];
    let types: Vec<String> = place.native.iter().map(|a| a.ty.c_text()).collect();
    assert_eq!(
        types,
        ["int", "unsigned long", "char *", "struct in **", "uint64_t"]
    );
    assert_eq!(place.native[0].name.as_deref(), Some("i"));
    assert_eq!(place.native[4].name, None);
    let out = place.translated.as_ref().unwrap();
    let names: Vec<Option<&str>> = out.iter().map(|a| a.name.as_deref()).collect();
    assert_eq!(names, [Some("s"), Some("i"), Some("i")]);
    let types: Vec<String> = p.probes[3].native.iter().map(|a| a.ty.c_text()).collect();
    assert_eq!(types, ["char **", "const char *"]);
}

#[test]
fn provider_errors() {
    let e = error("provider p1 { probe x(); };");
    assert_eq!(e.0, "D_PROV_BADNAME");
    assert!(e.1.contains("may not end with a digit: p1"), "{e:?}");
    let e = error("provider p { probe x(); probe x(int); };");
    assert_eq!(e.0, "D_PROV_PRDUP");
    let e = error("provider p { probe x(int a) : (int b); };");
    assert_eq!(e.0, "D_DECL_PROTO_FORM");
    let e = error("provider p { probe x(void, int); };");
    assert_eq!(e.0, "D_DECL_PROTO_VOID");
    let e = error("provider p { probe x(int, ...); };");
    assert_eq!(e.0, "D_DECL_PROTO_VARARGS");
    assert_eq!(error("provider p { int x; };").0, "D_SYNTAX");
}
