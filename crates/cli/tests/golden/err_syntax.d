/* flags: -q -x errtags */
/* A syntax error. */

BEGIN
{
	x = ;
}
