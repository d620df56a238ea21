/* flags: -q -x errtags */
/* A conversion without its argument (after Oracle DTrace test printf/err.D_PRINTF_ARG_PROTO.novalue). */

BEGIN
{
	printf("%s");
}
