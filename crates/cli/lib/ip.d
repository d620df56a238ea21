/*
 * ip.d -- the ip provider's argument types and their translators, for Linux.
 *
 * Part of dtrace's built-in D library (see procfs.d).  ip:::send and ip:::receive give
 * a packet (pktinfo_t, from struct sk_buff), its socket (csinfo_t, from struct sock),
 * its IP header in a version-neutral form (ipinfo_t, addresses as text), the interface
 * (ifinfo_t, from struct net_device) and the header again as IPv4 or IPv6 (ipv4info_t,
 * ipv6info_t: all zero, and the strings "<null>", for the other version).  The tcp and
 * udp providers use pktinfo_t, csinfo_t and ipinfo_t too.
 */

#pragma D depends_on provider ip
#pragma D depends_on provider tcp
#pragma D depends_on provider udp

/* IP protocol numbers. */
inline int IPPROTO_IP = 0;
inline int IPPROTO_ICMP = 1;
inline int IPPROTO_IGMP = 2;
inline int IPPROTO_IPIP = 4;
inline int IPPROTO_TCP = 6;
inline int IPPROTO_EGP = 8;
inline int IPPROTO_PUP = 12;
inline int IPPROTO_UDP = 17;
inline int IPPROTO_IDP = 22;
inline int IPPROTO_TP = 29;
inline int IPPROTO_DCCP = 33;
inline int IPPROTO_IPV6 = 41;
inline int IPPROTO_RSVP = 46;
inline int IPPROTO_GRE = 47;
inline int IPPROTO_ESP = 50;
inline int IPPROTO_AH = 51;
inline int IPPROTO_OSPF = 89;
inline int IPPROTO_MTP = 92;
inline int IPPROTO_BEETPH = 94;
inline int IPPROTO_ENCAP = 98;
inline int IPPROTO_PIM = 103;
inline int IPPROTO_COMP = 108;
inline int IPPROTO_SCTP = 132;
inline int IPPROTO_UDPLITE = 136;
inline int IPPROTO_RAW = 255;
inline int IPPROTO_MAX = 256;
inline int IPPROTO_HOPOPTS = 0;
inline int IPPROTO_ROUTING = 43;
inline int IPPROTO_FRAGMENT = 44;
inline int IPPROTO_ICMPV6 = 58;
inline int IPPROTO_NONE = 59;
inline int IPPROTO_DSTOPTS = 60;
inline int IPPROTO_MH = 135;

inline int TCP_MIN_HEADER_LENGTH = 20;

/* Solaris's network stack id: here the address of the interface's network namespace. */
typedef uint64_t netstackid_t;
/* An IPv4 address, in network byte order. */
typedef uint32_t ipaddr_t;
typedef struct in6_addr in6_addr_t;

/* A packet.  Linux has no packet ids: pkt_addr is the struct sk_buff's address. */
typedef struct pktinfo {
	uintptr_t pkt_addr;
} pktinfo_t;

/* A connection: the address of its struct sock (0 when the packet has none). */
typedef struct csinfo {
	uintptr_t cs_addr;
	uint64_t cs_cid;
} csinfo_t;

/* What IPv4 and IPv6 headers have in common. */
typedef struct ipinfo {
	uint8_t ip_ver;			/* 4 or 6 */
	uint32_t ip_plength;		/* payload length, in bytes */
	string ip_saddr;		/* source address, as text */
	string ip_daddr;		/* destination address, as text */
} ipinfo_t;

/* A network interface. */
typedef struct ifinfo {
	string if_name;			/* its name (lo, eth0) */
	int8_t if_local;		/* no interface: delivered locally */
	netstackid_t if_ipstack;	/* address of its network namespace */
	uintptr_t if_addr;		/* address of its struct net_device */
} ifinfo_t;

/* An IPv4 header (all zero for an IPv6 packet). */
typedef struct ipv4info {
	uint8_t ipv4_ver;		/* 4 */
	uint8_t ipv4_ihl;		/* header length, in bytes */
	uint8_t ipv4_tos;		/* type of service */
	uint16_t ipv4_length;		/* total length */
	uint16_t ipv4_ident;		/* identification */
	uint8_t ipv4_flags;		/* flags */
	uint16_t ipv4_offset;		/* fragment offset */
	uint8_t ipv4_ttl;		/* time to live */
	uint8_t ipv4_protocol;		/* next protocol (IPPROTO_*) */
	string ipv4_protostr;		/* next protocol, as text */
	uint16_t ipv4_checksum;		/* header checksum */
	ipaddr_t ipv4_src;		/* source address */
	ipaddr_t ipv4_dst;		/* destination address */
	string ipv4_saddr;		/* source address, as text */
	string ipv4_daddr;		/* destination address, as text */
	struct iphdr *ipv4_hdr;		/* the header */
} ipv4info_t;

/* An IPv6 header (all zero for an IPv4 packet). */
typedef struct ipv6info {
	uint8_t ipv6_ver;		/* 6 */
	uint8_t ipv6_tclass;		/* traffic class */
	uint32_t ipv6_flow;		/* flow label */
	uint16_t ipv6_plen;		/* payload length */
	uint8_t ipv6_nexthdr;		/* next header (IPPROTO_*) */
	string ipv6_nextstr;		/* next header, as text */
	uint8_t ipv6_hlim;		/* hop limit */
	in6_addr_t *ipv6_src;		/* source address */
	in6_addr_t *ipv6_dst;		/* destination address */
	string ipv6_saddr;		/* source address, as text */
	string ipv6_daddr;		/* destination address, as text */
	struct ipv6hdr *ipv6_hdr;	/* the header */
} ipv6info_t;

/* The address of an IPv4 or IPv6 header: its first byte says which. */
typedef uintptr_t void_ip_t;

/*
 * An IP header that a tcp probe may not have (a state change has no packet): then
 * ipinfo_t comes from the socket in arg3, source and destination by the direction in
 * arg7.
 */
typedef void *__dtrace_tcp_void_ip_t;

/* The version of the IP header at H. */
inline uint8_t __dtrace_ipver[uintptr_t H] = *(uint8_t *)H >> 4;

/* The name of IP protocol P. */
inline string __dtrace_ipproto[uint8_t P] =
	P == IPPROTO_TCP ? "TCP" :
	P == IPPROTO_UDP ? "UDP" :
	P == IPPROTO_IP ? "IP" :
	P == IPPROTO_ICMP ? "ICMP" :
	P == IPPROTO_IGMP ? "IGMP" :
	P == IPPROTO_EGP ? "EGP" :
	P == IPPROTO_IPV6 ? "IPv6" :
	P == IPPROTO_ROUTING ? "ROUTE" :
	P == IPPROTO_ESP ? "ESP" :
	P == IPPROTO_AH ? "AH" :
	P == IPPROTO_ICMPV6 ? "ICMPv6" :
	P == IPPROTO_OSPF ? "OSPF" :
	P == IPPROTO_SCTP ? "SCTP" :
	P == IPPROTO_RAW ? "RAW" :
	lltostr((uint64_t)P);

translator pktinfo_t < struct sk_buff *S > {
	pkt_addr = (uintptr_t)S;
};

translator csinfo_t < struct sock *S > {
	cs_addr = (uintptr_t)S;
	cs_cid = (uint64_t)S;
};

translator ipinfo_t < struct iphdr *I > {
	ip_ver = 4;
	ip_plength = I != NULL ? ntohs(I->tot_len) - ((*(uint8_t *)I & 0xf) << 2) : 0;
	ip_saddr = I != NULL ? inet_ntoa(&I->saddr) : "<unknown>";
	ip_daddr = I != NULL ? inet_ntoa(&I->daddr) : "<unknown>";
};

translator ipinfo_t < struct ipv6hdr *I > {
	ip_ver = 6;
	ip_plength = I != NULL ? ntohs(I->payload_len) : 0;
	ip_saddr = I != NULL ? inet_ntoa6(&I->saddr) : "<unknown>";
	ip_daddr = I != NULL ? inet_ntoa6(&I->daddr) : "<unknown>";
};

translator ipinfo_t < void_ip_t *I > {
	ip_ver = I != NULL ? __dtrace_ipver[(uintptr_t)I] : 0;
	ip_plength = I == NULL ? 0 :
	    __dtrace_ipver[(uintptr_t)I] == 4 ?
	    ntohs(((struct iphdr *)I)->tot_len) - ((*(uint8_t *)I & 0xf) << 2) :
	    __dtrace_ipver[(uintptr_t)I] == 6 ?
	    ntohs(((struct ipv6hdr *)I)->payload_len) : 0;
	ip_saddr = I == NULL ? "<unknown>" :
	    __dtrace_ipver[(uintptr_t)I] == 4 ?
	    inet_ntoa(&((struct iphdr *)I)->saddr) :
	    __dtrace_ipver[(uintptr_t)I] == 6 ?
	    inet_ntoa6(&((struct ipv6hdr *)I)->saddr) : "<unknown>";
	ip_daddr = I == NULL ? "<unknown>" :
	    __dtrace_ipver[(uintptr_t)I] == 4 ?
	    inet_ntoa(&((struct iphdr *)I)->daddr) :
	    __dtrace_ipver[(uintptr_t)I] == 6 ?
	    inet_ntoa6(&((struct ipv6hdr *)I)->daddr) : "<unknown>";
};

/*
 * A tcp probe's IP header, or when it has none (I is NULL), the socket arg3's
 * addresses: local is the source of an outbound packet (arg7), the destination of an
 * inbound one; the payload length then comes from the packet arg0's TCP sequence
 * numbers.
 */
translator ipinfo_t < __dtrace_tcp_void_ip_t *I > {
	ip_ver = I != NULL ? __dtrace_ipver[(uintptr_t)I] :
	    arg3 == NULL ? 0 :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET ? 4 :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET6 ? 6 : 0;
	ip_plength = I != NULL && __dtrace_ipver[(uintptr_t)I] == 4 ?
	    ntohs(((struct iphdr *)I)->tot_len) - ((*(uint8_t *)I & 0xf) << 2) :
	    I != NULL && __dtrace_ipver[(uintptr_t)I] == 6 ?
	    ntohs(((struct ipv6hdr *)I)->payload_len) :
	    arg0 != NULL ?
	    ((struct tcp_skb_cb *)((struct sk_buff *)arg0)->cb)->end_seq -
	    ((struct tcp_skb_cb *)((struct sk_buff *)arg0)->cb)->seq : 0;
	ip_saddr = I != NULL && __dtrace_ipver[(uintptr_t)I] == 4 ?
	    inet_ntoa(&((struct iphdr *)I)->saddr) :
	    I != NULL && __dtrace_ipver[(uintptr_t)I] == 6 ?
	    inet_ntoa6(&((struct ipv6hdr *)I)->saddr) :
	    arg3 == NULL ? "<unknown>" :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET ?
	    inet_ntoa(arg7 == NET_PROBE_INBOUND ?
	    &((struct sock *)arg3)->__sk_common.skc_daddr :
	    &((struct sock *)arg3)->__sk_common.skc_rcv_saddr) :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET6 ?
	    inet_ntoa6(arg7 == NET_PROBE_INBOUND ?
	    &((struct sock *)arg3)->__sk_common.skc_v6_daddr :
	    &((struct sock *)arg3)->__sk_common.skc_v6_rcv_saddr) :
	    "<unknown>";
	ip_daddr = I != NULL && __dtrace_ipver[(uintptr_t)I] == 4 ?
	    inet_ntoa(&((struct iphdr *)I)->daddr) :
	    I != NULL && __dtrace_ipver[(uintptr_t)I] == 6 ?
	    inet_ntoa6(&((struct ipv6hdr *)I)->daddr) :
	    arg3 == NULL ? "<unknown>" :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET ?
	    inet_ntoa(arg7 == NET_PROBE_INBOUND ?
	    &((struct sock *)arg3)->__sk_common.skc_rcv_saddr :
	    &((struct sock *)arg3)->__sk_common.skc_daddr) :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET6 ?
	    inet_ntoa6(arg7 == NET_PROBE_INBOUND ?
	    &((struct sock *)arg3)->__sk_common.skc_v6_rcv_saddr :
	    &((struct sock *)arg3)->__sk_common.skc_v6_daddr) :
	    "<unknown>";
};

translator ifinfo_t < struct net_device *N > {
	if_name = N != NULL ? stringof(N->name) : "<unknown>";
	if_local = N == NULL;
	if_ipstack = N != NULL ? (uint64_t)N->nd_net.net : 0;
	if_addr = (uintptr_t)N;
};

translator ipv4info_t < struct iphdr *I > {
	ipv4_ver = I != NULL ? 4 : 0;
	ipv4_ihl = I != NULL ? (*(uint8_t *)I & 0xf) << 2 : 0;
	ipv4_tos = I != NULL ? I->tos : 0;
	ipv4_length = I != NULL ? ntohs(I->tot_len) : 0;
	ipv4_ident = I != NULL ? ntohs(I->id) : 0;
	ipv4_flags = I != NULL ? ntohs(I->frag_off) >> 12 : 0;
	ipv4_offset = I != NULL ? ntohs(I->frag_off) & 0x0fff : 0;
	ipv4_ttl = I != NULL ? I->ttl : 0;
	ipv4_protocol = I != NULL ? I->protocol : 0;
	ipv4_protostr = I != NULL ? __dtrace_ipproto[I->protocol] : "<null>";
	ipv4_checksum = I != NULL ? ntohs(I->check) : 0;
	ipv4_src = I != NULL ? I->saddr : 0;
	ipv4_dst = I != NULL ? I->daddr : 0;
	ipv4_saddr = I != NULL ? inet_ntoa(&I->saddr) : "<null>";
	ipv4_daddr = I != NULL ? inet_ntoa(&I->daddr) : "<null>";
	ipv4_hdr = I;
};

translator ipv6info_t < struct ipv6hdr *I > {
	ipv6_ver = I != NULL ? __dtrace_ipver[(uintptr_t)I] : 0;
	ipv6_tclass = I != NULL ? (ntohl(*(uint32_t *)I) & 0x0fffffff) >> 20 : 0;
	ipv6_flow = I != NULL ? ntohl(*(uint32_t *)I) & 0x000fffff : 0;
	ipv6_plen = I != NULL ? ntohs(I->payload_len) : 0;
	ipv6_nexthdr = I != NULL ? I->nexthdr : 0;
	ipv6_nextstr = I != NULL ? __dtrace_ipproto[I->nexthdr] : "<null>";
	ipv6_hlim = I != NULL ? I->hop_limit : 0;
	ipv6_src = I != NULL ? &I->saddr : NULL;
	ipv6_dst = I != NULL ? &I->daddr : NULL;
	ipv6_saddr = I != NULL ? inet_ntoa6(&I->saddr) : "<null>";
	ipv6_daddr = I != NULL ? inet_ntoa6(&I->daddr) : "<null>";
	ipv6_hdr = I;
};
