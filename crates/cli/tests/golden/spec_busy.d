/* flags: -q -x nspec=2 */
/*
 * A discarded speculation stays busy until its records are read, and speculation() goes
 * on to the next id, as Oracle's does: with nspec=2 the id after a discarded one is free;
 * with both taken a third gets 0, a failed speculation "still busy" as one is draining.
 */
BEGIN
{
	a = speculation();
	discard(a);
	b = speculation();
	c = speculation();
	printf("%d %d %d\n", a, b, c);
	exit(0);
}
