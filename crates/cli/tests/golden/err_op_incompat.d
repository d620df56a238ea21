/* flags: -q -x errtags */
/* Adding a string and an integer. */

BEGIN
{
	x = "a" + 1;
}
