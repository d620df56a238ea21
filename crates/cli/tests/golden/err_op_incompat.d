/* flags: -q -x errtags */
/* Subtracting a string from an integer. */

BEGIN
{
	x = 1 - "a";
}
