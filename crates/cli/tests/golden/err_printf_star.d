/*
 * Two '*' for one width: Oracle DTrace names the width (the precision after
 * a '.').  Without -x errtags.
 */

BEGIN
{
	printf("%**d\n", 1, 2, 3);
}
