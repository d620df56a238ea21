/* flags: -q -x errtags */
/* D has no wide string literals: L"..." is the identifier L, then a string (as in DTrace). */

BEGIN
{
	printf("%ls\n", L"wide");
}
