/* A tick probe firing several times; END prints the total. */

BEGIN
{
	i = 0;
}

tick-1ms
/i < 5/
{
	printf("tick %d\n", i);
	@n = count();
	i++;
}

tick-1ms
/i == 5/
{
	exit(0);
}

END
{
	printf("done after %d\n", i);
}
