/* args: '"quoted"' /tmp/path 1.5 -7 execname 0x10 'tab\there' */
/*
 * A macro argument is an integer, an identifier (naming what it would in the
 * script), or else a string, its quotes stripped and escapes resolved, as in DTrace.
 */
BEGIN
{
	printf("[%s] [%s] [%s] [%d] [%s] [%d] [%s] [%s]\n", $1, $2, $3, $4, $5, $6,
	    $7, $$6);
	exit(0);
}
