/* flags: -q -x errtags */
/* An aggregation assigned the result of a function that does not aggregate. */

BEGIN
{
	@a = strlen("x");
}
