/*
 * Two '*' for one width: DTrace's message always says "precision" (its
 * code tests a flag that is never zero).  Without -x errtags.
 */

BEGIN
{
	printf("%**d\n", 1, 2, 3);
}
