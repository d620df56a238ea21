/* flags: -q -x errtags */
/* Multiplying a string. */

BEGIN
{
	x = "a" * 2;
}
