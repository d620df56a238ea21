/* flags: -q -x errtags */
/* Oracle DTrace test aggs/err.D_KEY_TYPE.void_key.d */
BEGIN
{
	@[trace(0)] = count();
	exit(0);
}
