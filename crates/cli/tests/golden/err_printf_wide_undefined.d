/* flags: -q -x errtags */
/* The w length modifier only makes wide characters and strings: %wd is undefined. */

BEGIN
{
	printf("%wd\n", 1);
}
