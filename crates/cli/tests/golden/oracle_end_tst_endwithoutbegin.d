#pragma D option quiet

END
{
	printf("End fired after exit\n");
}

tick-1
{
	exit(0);
}
