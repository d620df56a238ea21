/* flags: -q -x errtags */
/* Too many printf() arguments (after Oracle DTrace test printf/err.D_PRINTF_ARG_EXTRA.toomany). */

BEGIN
{
	printf("x = %d y = %d\n", 123, 456, 789);
}
