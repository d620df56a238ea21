/* flags: -q -x errtags */
/* Oracle DTrace test aggs/err.D_AGG_MDIM.bad.d */
BEGIN
{

	@counts[0][2] = count();
	exit(0);
}
