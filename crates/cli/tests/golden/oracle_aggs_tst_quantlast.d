/* Oracle DTrace test aggs/tst.quantlast.d */
#pragma D option quiet

BEGIN
{
	x = 0x4000000000000000;
	@ = quantize(x, 1234);
	exit(0);
}
