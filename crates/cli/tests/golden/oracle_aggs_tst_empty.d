/* Oracle DTrace test aggs/tst.empty.d */
#pragma D option quiet

BEGIN
{
	i = 12345678;
	@a = sum(i);
	exit(0);
}

/* this probe should not fire */
tick-1hour
{
	/* these aggregations should not be printed */
	@b = min(i);
	@c = max(i);
}
