/* flags: -q -x errtags */
/* trace() needs an argument. */

BEGIN
{
	trace();
}
