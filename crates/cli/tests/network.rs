//! The `ip`, `tcp` and `udp` providers on the live kernel: a small C program
//! (`network/traffic.c`) makes one TCP connection over loopback (127.0.0.1, then ::1), one
//! UDP datagram and one refused connection, and prints the ports it used; `dtrace -c` runs
//! it under `network/traffic.d`, and the tests check the lines of those ports: each probe
//! fired with the exact addresses, ports, flags and states. Other loopback traffic on the
//! machine is ignored by port. Needs root and gcc.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::dtrace;

/// The traffic program, built once.
fn traffic() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let dir = common::scratch("network", "traffic");
        common::build_c(
            &dir,
            "traffic",
            include_str!("network/traffic.c"),
            &["-O2", "-Wall"],
        )
    })
}

/// One traced run: dtrace's output and the ports the program printed.
struct Traced {
    out: String,
    /// The listener's, the client's.
    tcp: (u16, u16),
    /// The UDP sender's, the receiver's.
    udp: (u16, u16),
    /// The port nobody listened on.
    refused: u16,
}

/// Run the traffic over IPv4 (`4`) or IPv6 (`6`) under `traffic.d`.
fn run(version: &str) -> Traced {
    let cmd = format!("{} {version}", traffic().display());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/network/traffic.d");
    let run = dtrace(&["-q", "-s", script, "-c", &cmd]);
    assert_eq!(run.status, 0, "{}\n{}", run.stdout, run.stderr);
    let ports = |tag: &str| -> Vec<u16> {
        let line = run
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(tag)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no '{tag}' line in:\n{}", run.stdout));
        line.split(' ')
            .map(|p| p.parse().expect("a port"))
            .collect()
    };
    let (tcp, udp, refused) = (ports("tcp"), ports("udp"), ports("refused"));
    Traced {
        tcp: (tcp[0], tcp[1]),
        udp: (udp[0], udp[1]),
        refused: refused[0],
        out: run.stdout,
    }
}

impl Traced {
    /// The lines naming `port` (as `:port` or ` port `).
    fn of(&self, port: u16) -> Vec<&str> {
        let (colon, word) = (format!(":{port}"), format!(" {port} "));
        self.out
            .lines()
            .filter(|l| l.contains(&word) || l.split(' ').any(|w| w.ends_with(&colon)))
            .collect()
    }

    /// Fail unless `line` is printed exactly once.
    fn once(&self, line: &str) {
        let n = self.out.lines().filter(|l| *l == line).count();
        assert_eq!(n, 1, "{line:?} printed {n} times in:\n{}", self.out);
    }
}

/// The checks for one address family; `a` is the loopback address, `any` the
/// unspecified one.
fn check(t: &Traced, a: &str, any: &str) {
    let (s, c) = t.tcp;
    for line in [
        format!("connect-request {a} {c} {a} {s} 2 state-syn-sent {a}:{c} {a}:{s}"),
        format!("send {a} {c} {a} {s} 2 state-syn-sent {a}:{c} {a}:{s}"),
        format!("receive {a} {c} {a} {s} 2 state-idle {a}:{s} {a}:{c}"),
        format!("send {a} {s} {a} {c} 12 state-syn-received {a}:{s} {a}:{c}"),
        format!("receive {a} {s} {a} {c} 12 state-idle {a}:{c} {a}:{s}"),
        format!("send {a} {c} {a} {s} 18 state-established {a}:{c} {a}:{s}"),
        format!("receive {a} {c} {a} {s} 18 state-idle {a}:{s} {a}:{c}"),
        format!("send {a} {s} {a} {c} 18 state-established {a}:{s} {a}:{c}"),
        format!("send {a} {c} {a} {s} 11 state-fin-wait-1 {a}:{c} {a}:{s}"),
        format!("send {a} {s} {a} {c} 11 state-last-ack {a}:{s} {a}:{c}"),
        // The segments that made them: the SYN-ACK, the ACK of it.
        format!("connect-established state-established {a}:{c} {a}:{s} {s} {c}"),
        format!("accept-established state-established {a}:{s} {a}:{c} {c} {s}"),
    ] {
        t.once(&line);
    }
    let mut changes: Vec<&str> = t
        .of(s)
        .into_iter()
        .chain(t.of(c))
        .filter(|l| l.starts_with("state-change "))
        .collect();
    changes.sort();
    changes.dedup();
    let mut want = vec![
        format!("state-change state-closed -> state-listen {a}:{s} {any}:0"),
        format!("state-change state-closed -> state-syn-sent {a}:0 {a}:{s}"),
        format!("state-change state-syn-sent -> state-established {a}:{c} {a}:{s}"),
        format!("state-change state-listen -> state-syn-received {a}:{s} {a}:{c}"),
        format!("state-change state-syn-received -> state-established {a}:{s} {a}:{c}"),
        format!("state-change state-established -> state-fin-wait-1 {a}:{c} {a}:{s}"),
        format!("state-change state-established -> state-close-wait {a}:{s} {a}:{c}"),
        format!("state-change state-fin-wait-1 -> state-fin-wait-2 {a}:{c} {a}:{s}"),
        format!("state-change state-fin-wait-2 -> state-closed {a}:0 {a}:{s}"),
        format!("state-change state-close-wait -> state-last-ack {a}:{s} {a}:{c}"),
        format!("state-change state-last-ack -> state-closed {a}:0 {a}:{c}"),
    ];
    want.sort();
    assert_eq!(changes, want, "in:\n{}", t.out);

    let (u, r) = t.udp;
    t.once(&format!("udp-send {a} {u} {a} {r} 45 {a}:{u} {a}:{r}"));
    t.once(&format!("udp-receive {a} {u} {a} {r} 45 {a}:{r} {a}:{u}"));

    let n = t.refused;
    let refused = t.of(n);
    let accept_refused = format!("accept-refused {a} {n} {a} ");
    assert_eq!(
        refused
            .iter()
            .filter(|l| l.starts_with(&accept_refused) && l.contains(" 14 state-closed "))
            .count(),
        1,
        "{accept_refused}... in:\n{}",
        t.out
    );
    let connect_refused = format!(" {a}:{n} {n} ");
    assert_eq!(
        refused
            .iter()
            .filter(|l| l.starts_with("connect-refused state-syn-sent ")
                && l.contains(&connect_refused))
            .count(),
        1,
        "connect-refused ...{connect_refused} in:\n{}",
        t.out
    );
}

#[test]
fn ipv4_loopback() {
    let t = run("4");
    check(&t, "127.0.0.1", "0.0.0.0");
    // The datagram's IP header, at both ends.
    for probe in ["send", "receive"] {
        let line = format!("ip-{probe} 4 127.0.0.1 127.0.0.1 lo UDP <null> <null>");
        assert!(t.out.lines().any(|l| l == line), "{line} in:\n{}", t.out);
    }
}

#[test]
fn ipv6_loopback() {
    let t = run("6");
    check(&t, "::1", "::");
    for probe in ["send", "receive"] {
        let line = format!("ip-{probe} 6 ::1 ::1 lo <null> UDP ::1");
        assert!(t.out.lines().any(|l| l == line), "{line} in:\n{}", t.out);
    }
}

#[test]
fn listed_with_their_argument_types() {
    let run = dtrace(&["-lv", "-n", "tcp:::state-change"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.ends_with(
            "\tArgument Types\n\t\targs[0]: pktinfo_t *\n\t\targs[1]: csinfo_t *\n\t\targs[2]: ipinfo_t *\n\t\targs[3]: tcpsinfo_t *\n\t\targs[4]: tcpinfo_t *\n\t\targs[5]: tcplsinfo_t *\n\n"
        ),
        "{}",
        run.stdout
    );
    // Only the translators read the arguments beyond those.
    let run = dtrace(&["-n", "tcp:::send { trace(args[5]); }"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("index 5 is out of range for tcp:vmlinux::send args[ ]"),
        "{}",
        run.stderr
    );
    let run = dtrace(&["-l", "-P", "ip", "-P", "tcp", "-P", "udp"]);
    let names: Vec<String> = run
        .stdout
        .lines()
        .skip(1)
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            format!("{}:{}", w[1], w[w.len() - 1])
        })
        .collect();
    assert_eq!(
        names,
        [
            "ip:receive",
            "ip:send",
            "tcp:accept-established",
            "tcp:accept-refused",
            "tcp:connect-established",
            "tcp:connect-refused",
            "tcp:connect-request",
            "tcp:receive",
            "tcp:send",
            "tcp:state-change",
            "udp:receive",
            "udp:send",
        ]
    );
}
