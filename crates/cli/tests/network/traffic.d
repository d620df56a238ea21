/* What the network provider tests check: every probe of tcp, udp and ip (UDP payloads of 45 bytes). */

tcp:::send, tcp:::receive, tcp:::connect-request, tcp:::accept-refused
{
	printf("%s %s %d %s %d %x %s %s:%d %s:%d\n", probename, args[2]->ip_saddr,
	    args[4]->tcp_sport, args[2]->ip_daddr, args[4]->tcp_dport, args[4]->tcp_flags,
	    tcp_state_string[args[3]->tcps_state], args[3]->tcps_laddr, args[3]->tcps_lport,
	    args[3]->tcps_raddr, args[3]->tcps_rport);
}

tcp:::state-change
{
	printf("state-change %s -> %s %s:%d %s:%d\n", tcp_state_string[args[5]->tcps_state],
	    tcp_state_string[args[3]->tcps_state], args[3]->tcps_laddr, args[3]->tcps_lport,
	    args[3]->tcps_raddr, args[3]->tcps_rport);
}

tcp:::connect-established, tcp:::accept-established, tcp:::connect-refused
{
	printf("%s %s %s:%d %s:%d %d %d\n", probename, tcp_state_string[args[3]->tcps_state],
	    args[3]->tcps_laddr, args[3]->tcps_lport, args[3]->tcps_raddr, args[3]->tcps_rport,
	    args[4]->tcp_sport, args[4]->tcp_dport);
}

udp:::send, udp:::receive
{
	printf("udp-%s %s %d %s %d %d %s:%d %s:%d\n", probename, args[2]->ip_saddr,
	    args[4]->udp_sport, args[2]->ip_daddr, args[4]->udp_dport, args[4]->udp_length,
	    args[3]->udps_laddr, args[3]->udps_lport, args[3]->udps_raddr, args[3]->udps_rport);
}

ip:::send, ip:::receive
/args[2]->ip_plength == 45/
{
	printf("ip-%s %d %s %s %s %s %s %s\n", probename, args[2]->ip_ver, args[2]->ip_saddr,
	    args[2]->ip_daddr, args[3]->if_name, args[4]->ipv4_protostr, args[5]->ipv6_nextstr,
	    args[5]->ipv6_saddr);
}
