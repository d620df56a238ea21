/* flags: -x errtags */
/* Oracle DTrace test printa/tst.tuple.d */
#pragma D option quiet

BEGIN
{
	@a[1, 2, 3, 4, 5] = count();
	printf("\n");

	printa("%@u: -\n", @a);
	printa("%@u: %d\n", @a);
	printa("%@u: %d %d\n", @a);
	printa("%@u: %d %d %d\n", @a);
	printa("%@u: %d %d %d %d\n", @a);
	printa("%@u: %d %d %d %d %d\n", @a);

	exit(0);
}
