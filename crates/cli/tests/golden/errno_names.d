/*
 * Linux's error numbers by the names Oracle's D library gives them, beyond the
 * classic forty: networking (ECONNREFUSED, ETIMEDOUT, ...) and the aliases.
 */

BEGIN
{
	printf("%d %d %d %d\n", ENOMSG, EBFONT, EOVERFLOW, ENOTSOCK);
	printf("%d %d %d %d\n", ENETDOWN, ENETUNREACH, ECONNABORTED, ECONNRESET);
	printf("%d %d %d %d\n", ETIMEDOUT, ECONNREFUSED, EHOSTUNREACH, EINPROGRESS);
	printf("%d %d %d %d\n", ESTALE, EDQUOT, ECANCELED, EHWPOISON);
	printf("%d %d %d\n", EWOULDBLOCK, EDEADLOCK, ENOTSUP);
	exit(0);
}
