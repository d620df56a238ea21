/*
 * link.d -- link-layer address types, for link_ntop().
 *
 * Part of dtrace's built-in D library (see procfs.d): the ARPHRD_* values of
 * <linux/if_arp.h> that link_ntop() formats.
 */

inline int ARPHRD_ETHER = 1;		/* Ethernet: 6 bytes */
inline int ARPHRD_INFINIBAND = 32;	/* InfiniBand: 20 bytes */
