/* flags: -q -x errtags */
/* Oracle DTrace test aggs/err.D_AGG_SCALAR.avg_str_val.d */
BEGIN
{
	@ = avg("");
	exit(0);
}
