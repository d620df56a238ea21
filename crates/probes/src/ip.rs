//! The `ip` provider: IPv4 and IPv6 packets sent and received, as DTrace's `ip` probes,
//! mapped onto Linux's BTF raw tracepoints (see [`crate::mapped`], [`crate::net`]), with
//! arguments translated by the D library (`ip.d`).
//!
//! | probe | fires on | for |
//! |---|---|---|
//! | `send` | `net_dev_start_xmit` | each IP packet handed to a device (loopback included) |
//! | `receive` | `netif_receive_skb` | each IP packet a device passes up to the stack |

use crate::mapped::{Base, Def};
use crate::net::{ip_header, is_ip, is_ipv4, is_ipv6};
use crate::Probe;

/// The provider's name.
pub const PROVIDER: &str = "ip";

/// `args[]` of both probes over a packet in `args[0]`, with the interface `$dev`.
macro_rules! ip_args {
    ($dev:literal) => {
        &[
            ("pktinfo_t *", "xlate <pktinfo_t *> (args[0])"),
            ("csinfo_t *", "xlate <csinfo_t *> (args[0]->sk)"),
            (
                "ipinfo_t *",
                concat!("xlate <ipinfo_t *> ((void_ip_t *)", ip_header!(), ")"),
            ),
            ("ifinfo_t *", concat!("xlate <ifinfo_t *> (", $dev, ")")),
            (
                "ipv4info_t *",
                concat!(
                    "xlate <ipv4info_t *> (",
                    is_ipv4!(),
                    " ? (struct iphdr *)",
                    ip_header!(),
                    " : NULL)"
                ),
            ),
            (
                "ipv6info_t *",
                concat!(
                    "xlate <ipv6info_t *> (",
                    is_ipv6!(),
                    " ? (struct ipv6hdr *)",
                    ip_header!(),
                    " : NULL)"
                ),
            ),
        ]
    };
}

const DEFS: &[Def] = &[
    Def {
        name: "receive",
        base: Base::Raw("netif_receive_skb"),
        filter: Some(is_ip!()),
        fewer_args: None,
        args: ip_args!("args[0]->dev"),
    },
    Def {
        name: "send",
        base: Base::Raw("net_dev_start_xmit"),
        filter: Some(is_ip!()),
        fewer_args: None,
        args: ip_args!("args[1]"),
    },
];

/// The `ip` probes this kernel can supply, numbered from `first_id`.
pub fn probes(first_id: u32) -> Vec<Probe> {
    crate::mapped::probes(PROVIDER, DEFS, first_id)
}

/// The probes this kernel cannot have (their tracepoint is missing).
pub fn missing() -> Vec<crate::mapped::Missing> {
    crate::mapped::missing(PROVIDER, DEFS)
}
