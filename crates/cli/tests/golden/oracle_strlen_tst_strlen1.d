BEGIN
/strlen("I like DTrace") == 13/
{
	correct = 1;
}

BEGIN
{
	exit(correct ? 0 : 1);
}
