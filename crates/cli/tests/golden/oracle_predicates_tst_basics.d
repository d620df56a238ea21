#pragma D option quiet

BEGIN
{
	i = 0;
}

tick-10ms
/i < 10/
{
	i++;
	trace(i);
}

tick-10ms
/i == 10/
{
	exit(0);
}
