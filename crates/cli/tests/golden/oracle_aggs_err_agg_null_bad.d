/* flags: -q -x errtags */
/* Oracle DTrace test aggs/err.D_AGG_NULL.bad.d */
BEGIN
{

	@a[1];
}
