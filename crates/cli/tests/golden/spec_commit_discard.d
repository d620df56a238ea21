/* flags: */
/*
 * Speculations (DTrace's rules, as Oracle's speculation tests show them): data recorded
 * after speculate() prints only when its speculation is committed, in recorded order,
 * with the probe line of the clause that recorded it; a discarded speculation prints
 * nothing; a clause of commit() or discard() alone prints no probe line, and nor does
 * a clause of assignments alone.
 */
#pragma D option nspec=2

BEGIN
{
	a = speculation();
	b = speculation();
}

BEGIN
{
	speculate(a);
	printf("kept %d", a);
}

BEGIN
{
	speculate(b);
	printf("thrown away %d", b);
}

BEGIN
{
	speculate(a);
	trace("kept too");
}

BEGIN
{
	discard(b);
	commit(a);
}

BEGIN
{
	exit(0);
}
