/* flags: -q -x errtags */
/* An unknown conversion (after Oracle DTrace test printf/err.D_SYNTAX.badconv3). */

BEGIN
{
	printf("%Z", 123);
}
