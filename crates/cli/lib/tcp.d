/*
 * tcp.d -- the tcp provider's argument types, translators and constants, for Linux.
 *
 * Part of dtrace's built-in D library (see procfs.d).  Every tcp probe gives a packet
 * (pktinfo_t), its socket (csinfo_t), its IP header (ipinfo_t, ip.d), the connection's
 * state (tcpsinfo_t, from struct tcp_sock) and its TCP header (tcpinfo_t); state-change
 * also gives the state before (tcplsinfo_t).  The TCP_STATE_* values are Linux's own
 * TCP states.
 *
 * Beyond those, each probe has two arguments only these translators read: arg6, the
 * connection's state, and arg7, the packet's direction (NET_PROBE_INBOUND or
 * NET_PROBE_OUTBOUND, net.d).  When a probe has no full socket (a packet just received,
 * a SYN-ACK sent for a connection not yet accepted) tcpsinfo_t takes the ports and
 * addresses from the headers in arg4 and arg2, by that direction.
 */

#pragma D depends_on provider tcp

/* TCP header flags (tcpinfo_t.tcp_flags). */
inline int TH_FIN = 0x01;
inline int TH_SYN = 0x02;
inline int TH_RST = 0x04;
inline int TH_PSH = 0x08;
inline int TH_ACK = 0x10;
inline int TH_URG = 0x20;
inline int TH_ECE = 0x40;
inline int TH_CWR = 0x80;

/* Connection states (tcpsinfo_t.tcps_state): Linux's TCP states. */
inline int TCP_STATE_IDLE = 0x00;
inline int TCP_STATE_ESTABLISHED = 0x01;
inline int TCP_STATE_SYN_SENT = 0x02;
inline int TCP_STATE_SYN_RECEIVED = 0x03;
inline int TCP_STATE_FIN_WAIT_1 = 0x04;
inline int TCP_STATE_FIN_WAIT_2 = 0x05;
inline int TCP_STATE_TIME_WAIT = 0x06;
inline int TCP_STATE_CLOSED = 0x07;
inline int TCP_STATE_CLOSE_WAIT = 0x08;
inline int TCP_STATE_LAST_ACK = 0x09;
inline int TCP_STATE_LISTEN = 0x0a;
inline int TCP_STATE_CLOSING = 0x0b;

/* A state's name. */
inline string tcp_state_string[int state] =
	state == TCP_STATE_CLOSED ? "state-closed" :
	state == TCP_STATE_IDLE ? "state-idle" :
	state == TCP_STATE_LISTEN ? "state-listen" :
	state == TCP_STATE_SYN_SENT ? "state-syn-sent" :
	state == TCP_STATE_SYN_RECEIVED ? "state-syn-received" :
	state == TCP_STATE_ESTABLISHED ? "state-established" :
	state == TCP_STATE_CLOSE_WAIT ? "state-close-wait" :
	state == TCP_STATE_FIN_WAIT_1 ? "state-fin-wait-1" :
	state == TCP_STATE_CLOSING ? "state-closing" :
	state == TCP_STATE_LAST_ACK ? "state-last-ack" :
	state == TCP_STATE_FIN_WAIT_2 ? "state-fin-wait-2" :
	state == TCP_STATE_TIME_WAIT ? "state-time-wait" :
	"<unknown>";

/* A TCP header. */
typedef struct tcpinfo {
	uint16_t tcp_sport;		/* source port */
	uint16_t tcp_dport;		/* destination port */
	uint32_t tcp_seq;		/* sequence number */
	uint32_t tcp_ack;		/* acknowledgment number */
	uint8_t tcp_offset;		/* data offset, in bytes */
	uint8_t tcp_flags;		/* TH_* flags */
	uint16_t tcp_window;		/* window size */
	uint16_t tcp_checksum;		/* checksum */
	uint16_t tcp_urgent;		/* urgent pointer */
	uintptr_t tcp_hdr;		/* the header */
} tcpinfo_t;

/* A connection. */
typedef struct tcpsinfo {
	uintptr_t tcps_addr;		/* address of its struct tcp_sock */
	int tcps_local;			/* between local addresses */
	uint16_t tcps_lport;		/* local port */
	uint16_t tcps_rport;		/* remote port */
	string tcps_laddr;		/* local address, as text */
	string tcps_raddr;		/* remote address, as text */
	int tcps_state;			/* TCP_STATE_* */
	uint32_t tcps_iss;		/* initial sequence number sent */
	uint32_t tcps_suna;		/* oldest sequence number not acknowledged */
	uint32_t tcps_snxt;		/* next sequence number to send */
	uint32_t tcps_rnxt;		/* next sequence number expected */
	uint32_t tcps_swnd;		/* send window */
	int32_t tcps_snd_ws;		/* send window scale */
	uint32_t tcps_rwnd;		/* receive window */
	int32_t tcps_rcv_ws;		/* receive window scale */
	uint32_t tcps_cwnd;		/* congestion window */
	uint32_t tcps_cwnd_ssthresh;	/* slow start threshold */
	uint32_t tcps_sack_snxt;	/* next sequence number to retransmit (SACK) */
	uint32_t tcps_rto;		/* retransmission timeout */
	uint32_t tcps_mss;		/* maximum segment size */
	int tcps_retransmit;		/* a retransmission is being sent */
	uint32_t tcps_rtt;		/* smoothed round-trip time, ms */
	uint32_t tcps_rtt_sd;		/* its deviation, ms */
	uint32_t tcps_irs;		/* initial sequence number received */
} tcpsinfo_t;

/* The state before a state change. */
typedef struct tcplsinfo {
	int tcps_state;			/* TCP_STATE_* */
} tcplsinfo_t;

translator tcpinfo_t < struct tcphdr *T > {
	tcp_sport = T != NULL ? ntohs(T->source) : 0;
	tcp_dport = T != NULL ? ntohs(T->dest) : 0;
	tcp_seq = T != NULL ? ntohl(T->seq) : 0;
	tcp_ack = T != NULL ? ntohl(T->ack_seq) : 0;
	tcp_offset = T != NULL ? (*((uint8_t *)T + 12) & 0xf0) >> 2 : 0;
	tcp_flags = T != NULL ? *((uint8_t *)T + 13) : 0;
	tcp_window = T != NULL ? ntohs(T->window) : 0;
	tcp_checksum = T != NULL ? ntohs(T->check) : 0;
	tcp_urgent = T != NULL ? ntohs(T->urg_ptr) : 0;
	tcp_hdr = (uintptr_t)T;
};

/*
 * The probes without a packet (state-change, connect-established, accept-established,
 * connect-refused) give the ports of the socket S, by the direction in arg7 (an inbound
 * segment comes from the remote port); the rest of the header is not known there.
 */
translator tcpinfo_t < struct sock *S > {
	tcp_sport = S == NULL ? 0 : arg7 == NET_PROBE_INBOUND ?
	    ntohs(S->__sk_common.skc_dport) : S->__sk_common.skc_num;
	tcp_dport = S == NULL ? 0 : arg7 == NET_PROBE_INBOUND ?
	    S->__sk_common.skc_num : ntohs(S->__sk_common.skc_dport);
	tcp_seq = 0;
	tcp_ack = 0;
	tcp_offset = 0;
	tcp_flags = 0;
	tcp_window = 0;
	tcp_checksum = 0;
	tcp_urgent = 0;
	tcp_hdr = 0;
};

translator tcpsinfo_t < struct tcp_sock *T > {
	tcps_addr = (uintptr_t)T;
	tcps_local = T == NULL ? 0 :
	    ((struct sock *)T)->__sk_common.skc_family == AF_INET ?
	    ((struct sock *)T)->__sk_common.skc_rcv_saddr ==
	    ((struct sock *)T)->__sk_common.skc_daddr :
	    ((struct sock *)T)->__sk_common.skc_family == AF_INET6 ?
	    ((uint64_t *)&((struct sock *)T)->__sk_common.skc_v6_rcv_saddr)[0] ==
	    ((uint64_t *)&((struct sock *)T)->__sk_common.skc_v6_daddr)[0] &&
	    ((uint64_t *)&((struct sock *)T)->__sk_common.skc_v6_rcv_saddr)[1] ==
	    ((uint64_t *)&((struct sock *)T)->__sk_common.skc_v6_daddr)[1] : 0;
	tcps_lport = T != NULL ? ((struct sock *)T)->__sk_common.skc_num :
	    arg4 == NULL ? 0 :
	    ntohs(arg7 == NET_PROBE_INBOUND ?
	    ((struct tcphdr *)arg4)->dest : ((struct tcphdr *)arg4)->source);
	tcps_rport = T != NULL && ((struct sock *)T)->__sk_common.skc_dport != 0 ?
	    ntohs(((struct sock *)T)->__sk_common.skc_dport) :
	    arg4 == NULL ? 0 :
	    ntohs(arg7 == NET_PROBE_INBOUND ?
	    ((struct tcphdr *)arg4)->source : ((struct tcphdr *)arg4)->dest);
	tcps_laddr = T != NULL &&
	    ((struct sock *)T)->__sk_common.skc_family == AF_INET ?
	    inet_ntoa(&((struct sock *)T)->__sk_common.skc_rcv_saddr) :
	    T != NULL && ((struct sock *)T)->__sk_common.skc_family == AF_INET6 ?
	    inet_ntoa6(&((struct sock *)T)->__sk_common.skc_v6_rcv_saddr) :
	    arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 4 ?
	    inet_ntoa(arg7 == NET_PROBE_INBOUND ?
	    &((struct iphdr *)arg2)->daddr : &((struct iphdr *)arg2)->saddr) :
	    arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 6 ?
	    inet_ntoa6(arg7 == NET_PROBE_INBOUND ?
	    &((struct ipv6hdr *)arg2)->daddr : &((struct ipv6hdr *)arg2)->saddr) :
	    "<unknown>";
	tcps_raddr = T != NULL &&
	    ((struct sock *)T)->__sk_common.skc_family == AF_INET ?
	    inet_ntoa(&((struct sock *)T)->__sk_common.skc_daddr) :
	    T != NULL && ((struct sock *)T)->__sk_common.skc_family == AF_INET6 ?
	    inet_ntoa6(&((struct sock *)T)->__sk_common.skc_v6_daddr) :
	    arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 4 ?
	    inet_ntoa(arg7 == NET_PROBE_INBOUND ?
	    &((struct iphdr *)arg2)->saddr : &((struct iphdr *)arg2)->daddr) :
	    arg2 != NULL && __dtrace_ipver[(uintptr_t)arg2] == 6 ?
	    inet_ntoa6(arg7 == NET_PROBE_INBOUND ?
	    &((struct ipv6hdr *)arg2)->saddr : &((struct ipv6hdr *)arg2)->daddr) :
	    "<unknown>";
	tcps_state = arg6;
	tcps_iss = T != NULL ? T->snd_una - (uint32_t)T->bytes_acked : 0;
	tcps_suna = T != NULL ? T->snd_una : 0;
	tcps_snxt = T != NULL ? T->snd_nxt : 0;
	tcps_rnxt = T != NULL ? T->rcv_nxt : 0;
	tcps_swnd = T != NULL ? T->snd_wnd : 0;
	tcps_snd_ws = T != NULL ? T->rx_opt.snd_wscale : 0;
	tcps_rwnd = T != NULL ? T->rcv_wnd : 0;
	tcps_rcv_ws = T != NULL ? T->rx_opt.rcv_wscale : 0;
	tcps_cwnd = T != NULL ? T->snd_cwnd : 0;
	tcps_cwnd_ssthresh = T != NULL ? T->snd_ssthresh : 0;
	tcps_sack_snxt = T == NULL ? 0 :
	    T->sacked_out == 0 ? T->snd_una :
	    T->highest_sack == NULL ? T->snd_nxt :
	    ((struct tcp_skb_cb *)T->highest_sack->cb)->seq;
	tcps_rto = T != NULL ? T->inet_conn.icsk_rto : 0;
	tcps_mss = T != NULL ? T->mss_cache : 0;
	tcps_retransmit = T != NULL && arg0 != NULL ?
	    ((struct tcp_skb_cb *)((struct sk_buff *)arg0)->cb)->end_seq <
	    T->snd_nxt - 1 : 0;
	tcps_rtt = T != NULL ? (T->srtt_us >> 3) / 1000 : 0;
	tcps_rtt_sd = T != NULL ? (T->mdev_us >> 2) / 1000 : 0;
	tcps_irs = T != NULL && T->bytes_received > 0 ?
	    T->rcv_nxt - (uint32_t)T->bytes_received : 0;
};

translator tcplsinfo_t < int I > {
	tcps_state = I;
};
