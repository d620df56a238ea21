//! What the network providers (`ip`, `tcp`, `udp`) share: the D expressions that find a
//! packet's headers from the `struct sk_buff *` in `args[0]` of the raw tracepoints they
//! fire on, as macros giving string literals (so each provider's table stays `'static`).
//!
//! Packets are seen where the kernel hands them to a device (`net_dev_start_xmit`, with
//! the device) and where it takes them from one (`netif_receive_skb`); there the network
//! header is set and the transport header follows it (IPv6 extension headers are not
//! walked: a packet with them is not TCP or UDP here).

/// The packet's EtherType in host order (`0x0800` IPv4, `0x86dd` IPv6).
macro_rules! ethertype {
    () => {
        "ntohs(args[0]->protocol)"
    };
}

/// The packet's network (IP) header, an `unsigned char *`.
macro_rules! ip_header {
    () => {
        "(args[0]->head + args[0]->network_header)"
    };
}

/// Whether the packet is IPv4.
macro_rules! is_ipv4 {
    () => {
        concat!($crate::net::ethertype!(), " == 0x0800")
    };
}

/// Whether the packet is IPv6.
macro_rules! is_ipv6 {
    () => {
        concat!($crate::net::ethertype!(), " == 0x86dd")
    };
}

/// Whether the packet is IPv4 or IPv6.
macro_rules! is_ip {
    () => {
        concat!(
            "(",
            $crate::net::is_ipv4!(),
            " || ",
            $crate::net::is_ipv6!(),
            ")"
        )
    };
}

/// Whether the packet is IP carrying protocol `$p` (a number).
macro_rules! carries {
    ($p:literal) => {
        concat!(
            "((",
            $crate::net::is_ipv4!(),
            " && ((struct iphdr *)",
            $crate::net::ip_header!(),
            ")->protocol == ",
            $p,
            ") || (",
            $crate::net::is_ipv6!(),
            " && ((struct ipv6hdr *)",
            $crate::net::ip_header!(),
            ")->nexthdr == ",
            $p,
            "))"
        )
    };
}

/// The transport header after the IP header, an `unsigned char *`.
macro_rules! transport_header {
    () => {
        concat!(
            "(",
            $crate::net::ip_header!(),
            " + (",
            $crate::net::is_ipv4!(),
            " ? (*",
            $crate::net::ip_header!(),
            " & 0xf) << 2 : 40))"
        )
    };
}

pub(crate) use {carries, ethertype, ip_header, is_ip, is_ipv4, is_ipv6, transport_header};
