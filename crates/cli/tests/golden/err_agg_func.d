/* flags: -q -x errtags */
/* An aggregation assigned a plain value. */

BEGIN
{
	@a = 1;
}
