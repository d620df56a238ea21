/* Oracle DTrace test aggs/tst.typecast-key.d */
#pragma D option quiet

BEGIN
{
	@[(int32_t)1, 2] = count();
	@[(int64_t)1, 2] = count();
	exit(0);
}

ERROR
{
	exit(1);
}
