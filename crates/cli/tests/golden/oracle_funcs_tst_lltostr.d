/* flags: -x errtags */
/* Oracle DTrace test funcs2/tst.lltostr.d */
/*
 *
 *
 *
 *
 */

#pragma D option quiet

BEGIN
{
	printf("%s\n", lltostr(0));
	printf("%s\n", lltostr(1));
	printf("%s\n", lltostr(-1));
	printf("%s\n", lltostr(123456789));
	printf("%s\n", lltostr(-123456789));
	printf("%s\n", lltostr(1LL << 62));
	printf("%s\n", lltostr(-(1LL << 62)));
	printf("%s\n", lltostr(0x7ffffffffffffffe));
	printf("%s\n", lltostr(0x7fffffffffffffff));
	printf("%s\n", lltostr(0x8000000000000000));
	printf("%s\n", lltostr(0x8000000000000001));
	exit(0);
}
