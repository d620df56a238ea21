/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.store_zero_deletes.d */
#pragma D option dynvarsize=80
#pragma D option quiet

BEGIN
{
	a[1] = 1;
	a[2] = 2;
	a[3] = 3;
	a[1] = 0;
	a[4] = 4;
	trace(a[1]);
	trace(a[2]);
	trace(a[3]);
	trace(a[4]);
	exit(0);
}

ERROR
{
	exit(1);
}
