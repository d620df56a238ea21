/* system() is destructive: without -w or the destructive option, tracing is refused. */
BEGIN
{
	system("echo no");
	exit(0);
}
