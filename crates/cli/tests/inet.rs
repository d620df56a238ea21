//! `inet_ntoa`, `inet_ntoa6`, `inet_ntop` and `link_ntop` on the live kernel: addresses
//! built in `alloca` memory in `BEGIN` and printed, against the text DTrace gives (IPv6
//! zero-run compression, IPv4-mapped and IPv4-compatible forms, strict prefixes, `strsize`
//! truncation, hardware addresses), plus their errors: a null address faults, so does an
//! unknown link type, and a wrong pointer type or a `strict` that is not a constant is
//! refused. Needs root.

mod common;

use common::dtrace;

/// D statements storing `bytes` (index, value) into a zeroed 20-byte buffer `b`.
fn address(bytes: &[(u8, u8)]) -> String {
    let mut s = String::from("b = (uint8_t *)alloca(20);");
    for (i, v) in bytes {
        s += &format!("b[{i}] = {v:#x};");
    }
    s
}

/// Run `BEGIN { <setup> printf("%s\n", <expr>); exit(0); }` quietly with `options`;
/// the printed line.
fn show(options: &[&str], setup: &str, expr: &str) -> String {
    let program = format!("BEGIN {{ {setup} printf(\"%s\\n\", {expr}); exit(0); }}");
    let mut args = vec!["-q"];
    args.extend_from_slice(options);
    args.extend(["-n", &program]);
    let run = dtrace(&args);
    assert_eq!(run.status, 0, "{program}\n{}", run.stderr);
    run.stdout.trim_end_matches('\n').to_string()
}

/// An IPv6 address's non-zero bytes (index, value), its `inet_ntoa6` and `inet_ntop` text.
type Case = (&'static [(u8, u8)], &'static str, &'static str);

/// The IPv6 addresses of Oracle's tests and a few more.
const V6: &[Case] = &[
    (
        &[
            (0, 0xfe),
            (1, 0x80),
            (8, 2),
            (9, 0x14),
            (10, 0x4f),
            (11, 0xff),
            (12, 0xfe),
            (13, 0x0b),
            (14, 0x76),
            (15, 0xc8),
        ],
        "fe80::214:4fff:fe0b:76c8",
        "fe80::214:4fff:fe0b:76c8",
    ),
    (
        &[
            (0, 0x10),
            (1, 0x80),
            (10, 8),
            (11, 8),
            (13, 0x0c),
            (14, 0x41),
            (15, 0x7a),
        ],
        "1080::808:c:417a",
        "1080::808:c:417a",
    ),
    (&[(15, 1)], "::1", "::1"),
    (&[], "::", "::"),
    (&[(12, 0x7f), (15, 1)], "127.0.0.1", "::127.0.0.1"),
    (
        &[(10, 0xff), (11, 0xff), (12, 0x7f), (15, 1)],
        "127.0.0.1",
        "::ffff:127.0.0.1",
    ),
    (
        &[(10, 0xff), (11, 0xfe), (12, 0x7f), (15, 1)],
        "::fffe:7f00:1",
        "::fffe:7f00:1",
    ),
    (&[(15, 2)], "0.0.0.2", "::0.0.0.2"),
    (
        &[
            (0, 0xfe),
            (1, 0x12),
            (2, 0x34),
            (3, 0x56),
            (4, 0x78),
            (5, 0x9a),
            (6, 0xbc),
            (7, 0xde),
            (8, 2),
            (9, 0x14),
        ],
        "fe12:3456:789a:bcde:214::",
        "fe12:3456:789a:bcde:214::",
    ),
    (
        &[
            (0, 0xfe),
            (1, 0x12),
            (2, 0x34),
            (3, 0x56),
            (4, 0x78),
            (5, 0x9a),
            (6, 0xbc),
            (7, 0xde),
            (8, 2),
            (9, 0x14),
            (10, 0x4f),
            (11, 0xff),
            (12, 0xfe),
            (13, 0x0b),
        ],
        "fe12:3456:789a:bcde:214:4fff:fe0b:0",
        "fe12:3456:789a:bcde:214:4fff:fe0b:0",
    ),
    // Two runs of two zero words: the first is compressed.
    (
        &[(1, 1), (7, 1), (13, 1), (15, 1)],
        "1::1:0:0:1:1",
        "1::1:0:0:1:1",
    ),
    (
        &[
            (0, 0xff),
            (1, 0xff),
            (2, 0xff),
            (3, 0xff),
            (4, 0xff),
            (5, 0xff),
            (6, 0xff),
            (7, 0xff),
            (8, 0xff),
            (9, 0xff),
            (10, 0xff),
            (11, 0xff),
            (12, 0xff),
            (13, 0xff),
            (14, 0xff),
            (15, 0xff),
        ],
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    ),
];

#[test]
fn ipv4_addresses_in_dotted_decimal() {
    for (value, want) in [
        ("0xc0a80117", "192.168.1.23"),
        ("0x7f000001", "127.0.0.1"),
        ("0xffffffff", "255.255.255.255"),
        ("0", "0.0.0.0"),
        ("0x0a00640b", "10.0.100.11"),
    ] {
        let setup = format!("a = (ipaddr_t *)alloca(4); *a = htonl({value});");
        assert_eq!(show(&[], &setup, "inet_ntoa(a)"), want, "{value}");
        assert_eq!(show(&[], &setup, "inet_ntop(AF_INET, a)"), want, "{value}");
    }
}

#[test]
fn ipv6_addresses_as_dtrace_writes_them() {
    for (bytes, ntoa6, ntop) in V6 {
        let setup = address(bytes);
        let p = "(struct in6_addr *)b";
        assert_eq!(show(&[], &setup, &format!("inet_ntoa6({p})")), *ntoa6);
        assert_eq!(show(&[], &setup, &format!("inet_ntoa6({p}, 0)")), *ntoa6);
        assert_eq!(show(&[], &setup, &format!("inet_ntoa6({p}, 1)")), *ntop);
        assert_eq!(show(&[], &setup, "inet_ntop(AF_INET6, b)"), *ntop);
    }
}

#[test]
fn the_family_may_be_known_only_at_run_time() {
    let setup = format!(
        "{} af = timestamp > 0 ? AF_INET6 : AF_INET;",
        address(&[(15, 1)])
    );
    assert_eq!(show(&[], &setup, "inet_ntop(af, b)"), "::1");
    let setup = format!(
        "{} af = timestamp > 0 ? AF_INET : AF_INET6;",
        address(&[(0, 10), (3, 7)])
    );
    assert_eq!(show(&[], &setup, "inet_ntop(af, b)"), "10.0.0.7");
}

#[test]
fn hardware_addresses() {
    let setup = address(&[
        (0, 0x02),
        (1, 0x08),
        (2, 0x20),
        (3, 0xac),
        (4, 0x04),
        (5, 0x0e),
    ]);
    assert_eq!(
        show(&[], &setup, "link_ntop(ARPHRD_ETHER, b)"),
        "02:08:20:ac:04:0e"
    );
    let setup = format!(
        "{} t = timestamp > 0 ? ARPHRD_INFINIBAND : ARPHRD_ETHER;",
        address(&[(0, 0x80), (4, 0xfe), (15, 0xc9)])
    );
    assert_eq!(
        show(&[], &setup, "link_ntop(t, b)"),
        "80:00:00:00:fe:00:00:00:00:00:00:00:00:00:00:c9:00:00:00:00"
    );
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN { trace(link_ntop(-1, alloca(8))); exit(0); } ERROR { exit(1); }",
    ]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    assert!(run.stderr.contains("illegal operation"), "{}", run.stderr);
}

#[test]
fn text_is_cut_at_strsize() {
    let setup = address(V6[0].0);
    let got = show(
        &["-x", "strsize=10"],
        &setup,
        "inet_ntoa6((struct in6_addr *)b)",
    );
    assert_eq!(got, "fe80::214:");
}

#[test]
fn a_null_address_faults() {
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN { p = (struct in6_addr *)0; trace(inet_ntoa6(p)); exit(0); } ERROR { exit(1); }",
    ]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains("invalid address (0x0)"),
        "{}",
        run.stderr
    );
}

#[test]
fn wrong_arguments_are_refused() {
    for (program, msg) in [
        (
            "BEGIN { p = (int *)alloca(16); trace(inet_ntoa6(p)); }",
            "[D_PROTO_ARG]",
        ),
        (
            "BEGIN { n = 1; trace(inet_ntoa6((struct in6_addr *)alloca(16), n)); }",
            "inet_ntoa6( ) argument #2 must be an integer constant",
        ),
        ("BEGIN { inet_ntoa6(); }", "[D_PROTO_LEN]"),
        ("BEGIN { inet_ntop(2); }", "[D_PROTO_LEN]"),
    ] {
        let run = dtrace(&["-x", "errtags", "-n", program]);
        assert_eq!(run.status, 1, "{program}");
        assert!(run.stderr.contains(msg), "{program}: {}", run.stderr);
    }
}
