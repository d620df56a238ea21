#pragma D option quiet

END
{
	printf("End fired after exit\n");
}

BEGIN
{
	printf("Begin fired first\n");
}

tick-1
{
	printf("tick fired second\n");
	printf("Call exit\n");
	exit(0);
}
