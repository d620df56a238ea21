/* flags: -q -x errtags */
/* Oracle DTrace test aggs/err.D_LQUANT_MATCHBASE.d */
BEGIN
{
	@ = lquantize(0, 10, 20, 1);
	@ = lquantize(0, 15, 20, 1);
}
