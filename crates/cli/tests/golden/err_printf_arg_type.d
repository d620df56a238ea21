/* flags: -q -x errtags */
/* %d given a string. */

BEGIN
{
	printf("%d\n", "str");
}
