/* flags: */
/* Modulo by zero in END: the error names the END probe (ID 2); non-quiet output. */

BEGIN
{
	exit(0);
}

END
{
	x = 0;
	trace(5 % x);
}
