/*
 * net.d -- address families and packet directions, for the network providers.
 *
 * Part of dtrace's built-in D library (see procfs.d).  inet_ntop() takes an address
 * family (AF_INET, AF_INET6); ip.d, tcp.d and udp.d translate their probes' arguments
 * with these names.
 */

#pragma D depends_on provider ip
#pragma D depends_on provider tcp
#pragma D depends_on provider udp

/* Address families (Linux values): the first argument of inet_ntop(). */
inline int AF_INET = 2;
inline int AF_INET6 = 10;

/* Link types, for link_ntop(). */
inline int ARPHRD_ETHER = 1;
inline int ARPHRD_INFINIBAND = 32;

/* Which way a packet goes, as the tcp and udp translators are told (arg7). */
inline int NET_PROBE_OUTBOUND = 0;
inline int NET_PROBE_INBOUND = 1;

/* A connection's ends, as Solaris's network providers describe them. */
typedef struct conninfo {
	string ci_local;	/* local address */
	string ci_remote;	/* remote address */
	string ci_protocol;	/* "ipv4", "ipv6", ... */
} conninfo_t;
