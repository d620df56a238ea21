/* flags: -q -x errtags */
/* One aggregation, two functions. */

BEGIN
{
	@a = count();
	@a = sum(1);
}
