/* A predicate may read a variable that only its own clause's actions assign (DTrace types
   the actions first), and may define a clause-local variable its actions read. */
#pragma D option quiet

BEGIN
/n == 0/
{
	n = 5;
	printf("first %d\n", n);
}

BEGIN
/(this->x = n * 2) > 0/
{
	printf("second %d %d\n", n, this->x);
	exit(0);
}
