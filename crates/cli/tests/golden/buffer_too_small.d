/* flags: -q -x bufsize=32 */
/*
 * A trace buffer smaller than a record cannot be enabled, as in DTrace; with
 * bufpolicy=fill the message says it is END's record that does not fit, since a
 * buffer that fills up keeps room for END.
 */
#pragma D option bufpolicy=fill
#pragma D option strsize=64
BEGIN
{
	exit(0);
}
END
{
	trace(execname);
}
