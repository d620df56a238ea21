/* flags: -q -x errtags */
/* An action beside a value in ?: is refused for the types before the action. */

BEGIN
{
	verbose = 1;
	verbose ? printf("starting\n") : 1;
}
