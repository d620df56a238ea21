//! The `tcp` provider: TCP segments and connection states, as DTrace's `tcp` probes,
//! mapped onto Linux's BTF raw tracepoints (see [`crate::mapped`], [`crate::net`]), with
//! arguments translated by the D library (`tcp.d`, `ip.d`).
//!
//! | probe | fires on | when |
//! |---|---|---|
//! | `send` | `net_dev_start_xmit` | a TCP segment is handed to a device |
//! | `receive` | `netif_receive_skb` | a device passes a TCP segment up (before its socket is looked up) |
//! | `state-change` | `inet_sock_set_state` | a TCP socket changes state |
//! | `connect-request` | `net_dev_start_xmit` | a SYN (without ACK) is sent |
//! | `connect-established` | `inet_sock_set_state` | SYN-SENT becomes ESTABLISHED |
//! | `connect-refused` | `tcp_receive_reset` | a reset arrives in SYN-SENT |
//! | `accept-established` | `inet_sock_set_state` | SYN-RECEIVED becomes ESTABLISHED |
//! | `accept-refused` | `net_dev_start_xmit` | a RST+ACK is sent with no connection (the reply to a SYN for a port nobody listens on) |
//!
//! Besides the five (six for `state-change`) listed arguments, each probe has the two the
//! translators read, as in DTrace: `arg6`, the connection's state, and `arg7`, the
//! direction (0 out, 1 in). A packet sent by a full socket has it in `tcpsinfo_t`; one
//! received, or sent by a request or time-wait socket or the kernel's reset socket, has
//! none, and `tcpsinfo_t` takes ports and addresses from the headers. The probes without
//! a packet give the socket's ports in `tcpinfo_t`, as the segment that made the change
//! had them (by the direction), and zeros for the rest of its header.

use crate::mapped::{Base, Def};
use crate::net::{carries, ip_header, transport_header};
use crate::Probe;

/// The provider's name.
pub const PROVIDER: &str = "tcp";

/// The socket of the packet in `args[0]`.
macro_rules! sk {
    () => {
        "args[0]->sk->__sk_common"
    };
}

/// Whether the packet in `args[0]` belongs to a full TCP socket (not a request or
/// time-wait socket, nor the raw socket that sends resets).
macro_rules! full_socket {
    () => {
        concat!(
            "(args[0]->sk != NULL && ",
            sk!(),
            ".skc_state != 12 && ",
            sk!(),
            ".skc_state != 6 && args[0]->sk->sk_type == 1)"
        )
    };
}

/// The TCP header flags of the packet in `args[0]`.
macro_rules! flags {
    () => {
        concat!("*(", transport_header!(), " + 13)")
    };
}

/// `args[]` of a probe on the packet in `args[0]`: `$state` is `arg6`, `$dir` `arg7`.
macro_rules! packet_args {
    ($state:expr, $dir:literal) => {
        &[
            ("pktinfo_t *", "xlate <pktinfo_t *> (args[0])"),
            ("csinfo_t *", "xlate <csinfo_t *> (args[0]->sk)"),
            (
                "ipinfo_t *",
                concat!(
                    "xlate <ipinfo_t *> ((__dtrace_tcp_void_ip_t *)",
                    ip_header!(),
                    ")"
                ),
            ),
            (
                "tcpsinfo_t *",
                concat!(
                    "xlate <tcpsinfo_t *> (",
                    full_socket!(),
                    " ? (struct tcp_sock *)args[0]->sk : NULL)"
                ),
            ),
            (
                "tcpinfo_t *",
                concat!(
                    "xlate <tcpinfo_t *> ((struct tcphdr *)",
                    transport_header!(),
                    ")"
                ),
            ),
            ("", "0"),
            ("", $state),
            ("", $dir),
        ]
    };
}

/// `arg6` of a packet sent: its socket's state (a request socket's is SYN-RECEIVED), or
/// CLOSED without one.
macro_rules! sent_state {
    () => {
        concat!(
            "args[0]->sk == NULL ? 7 : ",
            sk!(),
            ".skc_state == 12 ? 3 : ",
            sk!(),
            ".skc_state"
        )
    };
}

/// `args[]` of a probe on the socket `args[0]` of `inet_sock_set_state (sk, oldstate,
/// newstate)` or `tcp_receive_reset (sk)`, without a packet: `$prev` is `args[5]` (the
/// previous state's `tcplsinfo_t *` at `state-change`, else none), `$state` is `arg6`,
/// `$dir` `arg7`.
macro_rules! socket_args {
    ($prev:expr, $state:literal, $dir:literal) => {
        &[
            (
                "pktinfo_t *",
                "xlate <pktinfo_t *> ((struct sk_buff *)NULL)",
            ),
            ("csinfo_t *", "xlate <csinfo_t *> (args[0])"),
            (
                "ipinfo_t *",
                "xlate <ipinfo_t *> ((__dtrace_tcp_void_ip_t *)NULL)",
            ),
            (
                "tcpsinfo_t *",
                "xlate <tcpsinfo_t *> ((struct tcp_sock *)args[0])",
            ),
            ("tcpinfo_t *", "xlate <tcpinfo_t *> (args[0])"),
            $prev,
            ("", $state),
            ("", $dir),
        ]
    };
}

/// A TCP socket's state change from `$old` to `$new` (numbers).
macro_rules! transition {
    ($old:literal, $new:literal) => {
        concat!(
            "args[0]->sk_protocol == 6 && args[1] == ",
            $old,
            " && args[2] == ",
            $new
        )
    };
}

const DEFS: &[Def] = &[
    Def {
        name: "accept-established",
        base: Base::Raw("inet_sock_set_state"),
        filter: Some(transition!("3", "1")),
        fewer_args: None,
        args: socket_args!(("", "0"), "args[2]", "1"),
    },
    Def {
        name: "accept-refused",
        base: Base::Raw("net_dev_start_xmit"),
        filter: Some(concat!(
            carries!("6"),
            " && (",
            flags!(),
            " & 0x14) == 0x14 && !",
            full_socket!()
        )),
        fewer_args: None,
        args: packet_args!(sent_state!(), "0"),
    },
    Def {
        name: "connect-established",
        base: Base::Raw("inet_sock_set_state"),
        filter: Some(transition!("2", "1")),
        fewer_args: None,
        args: socket_args!(("", "0"), "args[2]", "1"),
    },
    Def {
        name: "connect-refused",
        base: Base::Raw("tcp_receive_reset"),
        filter: Some("args[0]->__sk_common.skc_state == 2"),
        fewer_args: None,
        args: socket_args!(("", "0"), "args[0]->__sk_common.skc_state", "1"),
    },
    Def {
        name: "connect-request",
        base: Base::Raw("net_dev_start_xmit"),
        filter: Some(concat!(
            carries!("6"),
            " && (",
            flags!(),
            " & 0x12) == 0x02"
        )),
        fewer_args: None,
        args: packet_args!(sent_state!(), "0"),
    },
    Def {
        name: "receive",
        base: Base::Raw("netif_receive_skb"),
        filter: Some(carries!("6")),
        fewer_args: None,
        args: packet_args!("0", "1"),
    },
    Def {
        name: "send",
        base: Base::Raw("net_dev_start_xmit"),
        filter: Some(carries!("6")),
        fewer_args: None,
        args: packet_args!(sent_state!(), "0"),
    },
    Def {
        name: "state-change",
        base: Base::Raw("inet_sock_set_state"),
        filter: Some("args[0]->sk_protocol == 6"),
        fewer_args: None,
        args: socket_args!(
            ("tcplsinfo_t *", "xlate <tcplsinfo_t *> (args[1])"),
            "args[2]",
            "0"
        ),
    },
];

/// The `tcp` probes this kernel can supply, numbered from `first_id`.
pub fn probes(first_id: u32) -> Vec<Probe> {
    crate::mapped::probes(PROVIDER, DEFS, first_id)
}

/// The probes this kernel cannot have (their tracepoint is missing).
pub fn missing() -> Vec<crate::mapped::Missing> {
    crate::mapped::missing(PROVIDER, DEFS)
}
