//! `print()` on the live kernel: a D struct (nested struct and union, char array, enum,
//! bool, pointer, bit-fields) and a kernel struct laid out member by member as DTrace
//! shows them, zero members left out, and `printsize` (also changed by `setopt()`)
//! cutting the walk short. The address line is checked against `printf("%p")` of the same
//! pointer.

mod common;

use common::dtrace;

/// DTrace's first-column indent of print()'s object lines.
const PAD: &str = "                                            ";

/// Run a BEGIN clause that prints `%p` of `t` and then `print(t)`s each time `prints`
/// says; the output with the address line checked and replaced by `ADDR = *`.
fn printed(decls: &str, body: &str) -> String {
    let script = format!("{decls}\nBEGIN {{ {body} exit(0); }}");
    let run = dtrace(&["-q", "-n", &script]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // (The blank line DTrace ends its output with is not print()'s.)
    let mut lines = run.stdout.trim_end().lines();
    let addr = lines.next().expect("the %p line").to_string();
    let mut out = String::new();
    for line in lines {
        match line.strip_suffix(" = *") {
            Some(a) => {
                // `%p` is hex without `0x`, as in DTrace.
                assert_eq!(a, format!("0x{addr}"), "print()'s address is the pointer's");
                out.push_str("ADDR = *\n");
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The expected text: each line after the first is indented by DTrace's 44 columns.
fn expect(lines: &[&str]) -> String {
    let mut out = String::from("ADDR = *\n");
    for l in lines {
        out.push_str(PAD);
        out.push_str(l);
        out.push('\n');
    }
    out
}

const TEST_STRUCT: &str = "
enum eh { FIRSTVAL = 0, SECONDVAL = 1, THIRDVAL = 3 };
struct test_struct {
	int a;
	char b[5];
	union { uint8_t c; uint64_t d; } u;
	struct { void *e; uint64_t f; } s;
	bool g;
	enum eh h;
};";

const FILL: &str = "t = (struct test_struct *)alloca(sizeof (struct test_struct));
	t->a = 1; t->b[0] = 't'; t->b[1] = 'e'; t->b[2] = 's'; t->b[3] = 't';
	t->u.d = 123456789; t->s.f = 987654321; t->g = 1; t->h = SECONDVAL;
	printf(\"%p\\n\", t);";

#[test]
fn d_struct_member_by_member() {
    common::require_root();
    let out = printed(TEST_STRUCT, &format!("{FILL} print(t);"));
    assert_eq!(
        out,
        expect(&[
            "(struct test_struct) {",
            " .a = (int)1,",
            " .b = (char [5]) [",
            "  (char)'t',",
            "  (char)'e',",
            "  (char)'s',",
            "  (char)'t',",
            " ],",
            " .u = (union) {",
            "  .c = (uint8_t)21,",
            "  .d = (uint64_t)123456789,",
            " },",
            " .s = (struct) {",
            "  .f = (uint64_t)987654321,",
            " },",
            " .g = (bool)1,",
            " .h = (enum eh)SECONDVAL,",
            "}",
        ])
    );
}

#[test]
fn printsize_cuts_the_walk_and_setopt_changes_it() {
    common::require_root();
    let out = printed(
        &format!("{TEST_STRUCT}\n#pragma D option printsize=8"),
        &format!("{FILL} print(t); setopt(\"printsize\", \"24\"); print(t);"),
    );
    let head = [
        "(struct test_struct) {",
        " .a = (int)1,",
        " .b = (char [5]) [",
        "  (char)'t',",
        "  (char)'e',",
        "  (char)'s',",
        "  (char)'t',",
        " ],",
    ];
    let mut want = expect(&[&head[..], &[" ...", "}"]].concat());
    want.push_str(&expect(
        &[
            &head[..],
            &[
                " .u = (union) {",
                "  .c = (uint8_t)21,",
                "  .d = (uint64_t)123456789,",
                " ...",
                " },",
                "}",
            ],
        ]
        .concat(),
    ));
    assert_eq!(out, want);
}

#[test]
fn bitfields_and_zero_members() {
    common::require_root();
    let out = printed(
        "struct bits { unsigned int a:3; unsigned int b:5; int c; long z; };",
        "t = (struct bits *)alloca(sizeof (struct bits)); t->a = 5; t->b = 17; t->c = -2;
         printf(\"%p\\n\", t); print(t);",
    );
    assert_eq!(
        out,
        expect(&[
            "(struct bits) {",
            " .a = (unsigned int)5,",
            " .b = (unsigned int)17,",
            " .c = (int)-2,",
            "}",
        ])
    );
}

#[test]
fn kernel_struct_from_btf() {
    common::require_root();
    let out = printed(
        "",
        "skb = (struct sk_buff *)alloca(sizeof (struct sk_buff)); skb->len = 123;
         skb->truesize = 32; printf(\"%p\\n\", skb); print(skb);",
    );
    assert_eq!(
        out,
        expect(&[
            "(struct sk_buff) {",
            " .len = (unsigned int)123,",
            " .truesize = (unsigned int)32,",
            "}",
        ])
    );
}
