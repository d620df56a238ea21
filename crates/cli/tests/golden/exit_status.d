/* exit(N) sets dtrace's exit status; END still runs. */

BEGIN
{
	printf("exiting\n");
	exit(3);
}

END
{
	printf("end\n");
}
