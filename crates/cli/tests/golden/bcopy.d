/* bcopy into alloca memory; alloca(0) is where the next allocation goes; (string) of it. */
#pragma D option quiet
BEGIN
{
	s = alloca(0);
	bcopy(probename, alloca(10), 5);
	printf("[%s]\n", (string)s);
	d = (char *)alloca(8);
	bcopy("abcdefgh", d, 3);
	printf("[%s] %d\n", (string)d, alloca(0) == alloca(0));
}
BEGIN
{
	d = alloca(20);
	s = alloca(10);
	bcopy(s, d, 20);
}
BEGIN
{
	bcopy("x", alloca(1), -1);
}
BEGIN
{
	exit(0);
}
ERROR
{
	printf("ERROR: fault %d\n", arg4);
}
