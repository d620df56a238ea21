/* flags: -q -x errtags */
/* %s given an integer. */

BEGIN
{
	printf("%s\n", 1);
}
