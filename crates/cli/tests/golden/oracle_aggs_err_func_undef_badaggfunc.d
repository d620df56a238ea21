/* flags: -q -x errtags */
/* Oracle DTrace test aggs/err.D_FUNC_UNDEF.badaggfunc.d */
BEGIN
{
	@counts["badtest"] = foo();

}
