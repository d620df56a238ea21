/* flags: -q */
/*
 * Destructive actions need -w (or -x destructive): without it DTrace refuses to enable
 * tracing (Oracle's err.system-destructive and err.freopen-destructive).
 */
BEGIN
{
	raise(9);
	exit(0);
}
