/* flags: -q -x errtags */
/* A byte that is not UTF-8 outside a literal is a syntax error near it (shown as U+FFFD). */

BEGIN
{
	x = 1 é 2;
}
