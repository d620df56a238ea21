/* flags: -q -x errtags */
/* Oracle DTrace test aggs/err.D_KEY_TYPE.badkey1.d */
BEGIN
{
	@a[1, (void)0] = count();
}
