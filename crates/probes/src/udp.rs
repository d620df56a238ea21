//! The `udp` provider: UDP datagrams sent and received, as DTrace's `udp` probes, mapped
//! onto Linux's BTF raw tracepoints (see [`crate::mapped`], [`crate::net`]), with
//! arguments translated by the D library (`udp.d`, `ip.d`).
//!
//! | probe | fires on | when |
//! |---|---|---|
//! | `send` | `net_dev_start_xmit` | a UDP datagram is handed to a device |
//! | `receive` | `netif_receive_skb` | a device passes a UDP datagram up (before its socket is looked up) |
//!
//! `udpsinfo_t` takes the ends from the headers by the direction in `arg7` (0 out, 1 in),
//! which the translator reads, as in DTrace.

use crate::mapped::{Base, Def};
use crate::net::{carries, ip_header, transport_header};
use crate::Probe;

/// The provider's name.
pub const PROVIDER: &str = "udp";

/// `args[]` of both probes over the packet in `args[0]`; `$dir` is `arg7`.
macro_rules! udp_args {
    ($dir:literal) => {
        &[
            ("pktinfo_t *", "xlate <pktinfo_t *> (args[0])"),
            ("csinfo_t *", "xlate <csinfo_t *> (args[0]->sk)"),
            (
                "ipinfo_t *",
                concat!("xlate <ipinfo_t *> ((void_ip_t *)", ip_header!(), ")"),
            ),
            (
                "udpsinfo_t *",
                "xlate <udpsinfo_t *> ((struct udp_sock *)args[0]->sk)",
            ),
            (
                "udpinfo_t *",
                concat!(
                    "xlate <udpinfo_t *> ((struct udphdr *)",
                    transport_header!(),
                    ")"
                ),
            ),
            ("", "0"),
            ("", "0"),
            ("", $dir),
        ]
    };
}

const DEFS: &[Def] = &[
    Def {
        name: "receive",
        base: Base::Raw("netif_receive_skb"),
        filter: Some(carries!("17")),
        fewer_args: None,
        args: udp_args!("1"),
    },
    Def {
        name: "send",
        base: Base::Raw("net_dev_start_xmit"),
        filter: Some(carries!("17")),
        fewer_args: None,
        args: udp_args!("0"),
    },
];

/// The `udp` probes this kernel can supply, numbered from `first_id`.
pub fn probes(first_id: u32) -> Vec<Probe> {
    crate::mapped::probes(PROVIDER, DEFS, first_id)
}

/// The probes this kernel cannot have (their tracepoint is missing).
pub fn missing() -> Vec<crate::mapped::Missing> {
    crate::mapped::missing(PROVIDER, DEFS)
}
