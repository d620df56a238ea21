#pragma D option quiet

BEGIN
{
	i = 0;
	j = 0;
}

tick-10ms
/i < 10/
{
	i++;
	j++;
	printf("\n\n%d\n------\n", i);
}

tick-10ms
/i == 5 || i == 10/
{
	printf("i == 5 (or) i == 10\n");
}

tick-10ms
/i <= 5/
{
	printf("i <= 5\n");
}

tick-10ms
/j >= 5/
{
	printf("j >= 5\n");
}

tick-10ms
/j >= 5 || i <= 5/
{
	printf("i >= 5 || j >= 5\n");
}

tick-10ms
/j >= 5 && i <= 5/
{
	printf("j >= 5 && i <= 55\n");
}

tick-10ms
/i < 5/
{
	printf("i < 5\n");
}

tick-10ms
/i == 2 || j == 2/
{
	printf("i == 2 (or) j == 2\n");
}

tick-10ms
/i == 2 && j == 2/
{
	printf("i == 2 (and) j == 2\n");
}

tick-10ms
/j != 10/
{
	printf("j != 10\n");
}

tick-10ms
/j == 5 || i == 2/
{
	printf("j == 5 || i == 2\n");
}

tick-10ms
/j == 5 && i == 2/
{
	printf("j == 5 && i == 2\n");
}

tick-10ms
/i == 10/
{
	printf("i == 10\n");
	exit(0);
}
