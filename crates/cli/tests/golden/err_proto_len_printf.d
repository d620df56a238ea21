/* flags: -q -x errtags */
/* printf() needs a format (after Oracle DTrace test printf/err.D_PROTO_LEN.toofew). */

BEGIN
{
	printf();
}
