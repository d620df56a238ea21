#pragma D option quiet

END
{
	printf("End1 fired after exit\n");
}
END
{
	printf("End2 fired after exit\n");
}
END
{
	printf("End3 fired after exit\n");
}
END
{
	printf("End4 fired after exit\n");
}

BEGIN
{
	printf("Begin fired first\n");
	exit(0);
}
