/*
 * Loopback traffic for the network provider tests: over 127.0.0.1 (or ::1 with the
 * argument 6), one TCP connection (connect, accept, 5 bytes each way, close from the
 * client first), one UDP datagram of 37 bytes, and one TCP connection refused (a port
 * bound but not listening). Prints the ports it used.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int six;

static socklen_t address(struct sockaddr_storage *ss, int port)
{
	memset(ss, 0, sizeof(*ss));
	if (six) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		a->sin6_port = htons(port);
		return sizeof(*a);
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->sin_port = htons(port);
	return sizeof(*a);
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t n = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &n) != 0) {
		perror("getsockname");
		exit(1);
	}
	return ntohs(six ? ((struct sockaddr_in6 *)&ss)->sin6_port
			 : ((struct sockaddr_in *)&ss)->sin_port);
}

/* A socket of `type` bound to a free loopback port. */
static int bound(int type)
{
	struct sockaddr_storage ss;
	int fd = socket(six ? AF_INET6 : AF_INET, type, 0);
	socklen_t n = address(&ss, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, n) != 0) {
		perror("bind");
		exit(1);
	}
	return fd;
}

static int connected(int port)
{
	struct sockaddr_storage ss;
	int fd = socket(six ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	socklen_t n = address(&ss, port);
	return connect(fd, (struct sockaddr *)&ss, n) == 0 ? fd : -1;
}

int main(int argc, char **argv)
{
	char buf[64] = "0123456789012345678901234567890123456";
	struct sockaddr_storage ss;
	socklen_t n;

	six = argc > 1 && argv[1][0] == '6';

	int l = bound(SOCK_STREAM);
	listen(l, 1);
	int c = connected(port_of(l));
	int s = accept(l, NULL, NULL);
	if (c < 0 || s < 0) {
		perror("connect");
		return 1;
	}
	if (write(c, "hello", 5) != 5 || read(s, buf, 5) != 5 ||
	    write(s, "world", 5) != 5 || read(c, buf, 5) != 5)
		return 1;
	printf("tcp %d %d\n", port_of(l), port_of(c));
	close(c);
	usleep(50000);
	close(s);
	usleep(50000);
	close(l);

	int r = bound(SOCK_DGRAM), u = bound(SOCK_DGRAM);
	n = address(&ss, port_of(r));
	if (sendto(u, buf, 37, 0, (struct sockaddr *)&ss, n) != 37 ||
	    recv(r, buf, sizeof(buf), 0) != 37)
		return 1;
	printf("udp %d %d\n", port_of(u), port_of(r));

	int closed = bound(SOCK_STREAM);
	if (connected(port_of(closed)) >= 0)
		return 1;
	printf("refused %d\n", port_of(closed));
	fflush(stdout);
	usleep(100000);
	return 0;
}
