/* flags: -q -x specsize=40 */
/*
 * DTrace's speculative drops and failed speculations (Oracle's tst.SpecSizeVariations
 * and tst.NoSpecBuffer): a clause recording past specsize (16 bytes of header and 8 per
 * integer) stops where it passes it; a speculation recorded past specsize in all keeps
 * what came before; with nspec=1, a second speculation() gets 0.
 */
BEGIN
{
	s = speculation();
	t = speculation();
	printf("ids %d %d\n", s, t);
}

BEGIN
{
	speculate(s);
	printf("%d %d\n", 1, 2);
	n++;
}

BEGIN
{
	speculate(s);
	printf("%d\n", 3);
	n++;
}

BEGIN
{
	speculate(s);
	printf("%d %d %d %d\n", 4, 5, 6, 7);
	n++;
}

BEGIN
{
	commit(s);
}

BEGIN
{
	printf("clauses that ran to their end: %d\n", n);
	exit(0);
}
