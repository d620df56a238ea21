/* flags: -q -x errtags */
/* Positional conversions are not supported (after Oracle DTrace test printf/err.D_SYNTAX.badconv1). */

BEGIN
{
	printf("%3$d", 123);
}
