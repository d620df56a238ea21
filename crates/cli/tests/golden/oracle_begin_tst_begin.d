/* flags: -x errtags */
/* Oracle DTrace test begin/tst.begin.d */
#pragma D option quiet

END
{
	printf("End fired after exit\n");
}

BEGIN
{
	printf("Begin fired first\n");
}

tick-1ms
{
	printf("tick fired second\n");
	printf("Call exit\n");
	exit(0);
}
