/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.nested2.d */
#pragma D option quiet

BEGIN
{
	a[1, 2, 3] = 1234;
	a[3, 2, 3] = 4321;
	a[3, 2, 1] = 2;
	printf("%d\n", a[1, a[3, a[3, a[3, a[3, 2, 1], 1], 1], 1], 3]);

	exit(0);
}

ERROR
{
	exit(1);
}
