/*
 * udp.d -- the udp provider's argument types and translators, for Linux.
 *
 * Part of dtrace's built-in D library (see procfs.d).  udp:::send and udp:::receive
 * give a packet (pktinfo_t), its socket (csinfo_t), its IP header (ipinfo_t, ip.d), the
 * socket's ends (udpsinfo_t) and the UDP header (udpinfo_t).  The ends come from the
 * headers (arg2, arg4): local is the source of a packet sent, the destination of one
 * received.
 */

#pragma D depends_on provider udp

/* A UDP header. */
typedef struct udpinfo {
	uint16_t udp_sport;		/* source port */
	uint16_t udp_dport;		/* destination port */
	uint16_t udp_length;		/* length, header included */
	uint16_t udp_checksum;		/* checksum */
	struct udphdr *udp_hdr;		/* the header */
} udpinfo_t;

/* A UDP socket's ends. */
typedef struct udpsinfo {
	uintptr_t udps_addr;		/* address of its struct udp_sock */
	uint16_t udps_lport;		/* local port */
	uint16_t udps_rport;		/* remote port */
	string udps_laddr;		/* local address, as text */
	string udps_raddr;		/* remote address, as text */
} udpsinfo_t;

translator udpinfo_t < struct udphdr *U > {
	udp_sport = U != NULL ? ntohs(U->source) : 0;
	udp_dport = U != NULL ? ntohs(U->dest) : 0;
	udp_length = U != NULL ? ntohs(U->len) : 0;
	udp_checksum = U != NULL ? ntohs(U->check) : 0;
	udp_hdr = U;
};

translator udpsinfo_t < struct udp_sock *S > {
	udps_addr = (uintptr_t)S;
	udps_lport = arg4 == NULL ? 0 : ntohs(arg7 == NET_PROBE_INBOUND ?
	    ((struct udphdr *)arg4)->dest : ((struct udphdr *)arg4)->source);
	udps_rport = arg4 == NULL ? 0 : ntohs(arg7 == NET_PROBE_INBOUND ?
	    ((struct udphdr *)arg4)->source : ((struct udphdr *)arg4)->dest);
	udps_laddr = arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 4 ?
	    inet_ntoa(arg7 == NET_PROBE_INBOUND ?
	    &((struct iphdr *)arg2)->daddr : &((struct iphdr *)arg2)->saddr) :
	    arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 6 ?
	    inet_ntoa6(arg7 == NET_PROBE_INBOUND ?
	    &((struct ipv6hdr *)arg2)->daddr : &((struct ipv6hdr *)arg2)->saddr) :
	    "<unknown>";
	udps_raddr = arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 4 ?
	    inet_ntoa(arg7 == NET_PROBE_INBOUND ?
	    &((struct iphdr *)arg2)->saddr : &((struct iphdr *)arg2)->daddr) :
	    arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 6 ?
	    inet_ntoa6(arg7 == NET_PROBE_INBOUND ?
	    &((struct ipv6hdr *)arg2)->saddr : &((struct ipv6hdr *)arg2)->daddr) :
	    "<unknown>";
};
