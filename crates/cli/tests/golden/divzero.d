/*
 * Dividing by zero aborts the clause: its output is discarded, DTrace
 * reports the error and fires ERROR (arg1 the probe id, arg2 the clause's
 * statement number, as Oracle's DTrace for Linux); the other clauses still run.
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
	printf("ERROR: probe %d, clause %d, fault %d\n", arg1, arg2, arg4);
}

BEGIN
{
	exit(0);
}
