/* Oracle DTrace test aggs/tst.normalize_multiple_times.d */
#pragma D option quiet

BEGIN
{
	i = 0;
}

tick-10ms
/i < 20/
{
	@a = sum(i * 100);
	@b = sum(i * 100);
	i++;
}

tick-10ms
/i == 20/
{
	normalize(@a, 2);
	normalize(@a, 5);
	exit(0);
}
