/*
 * Dividing by zero aborts the clause: its output is discarded, DTrace
 * reports the error and fires ERROR; the other clauses still run.
 */

BEGIN
{
	x = 0;
}

BEGIN
{
	trace(1 / x);
}

BEGIN
{
	printf("after\n");
}

ERROR
{
	printf("ERROR: epid %d, action %d, fault %d\n", arg1, arg2, arg4);
}

BEGIN
{
	exit(0);
}
