/* flags: -x errtags */
/* Oracle DTrace test printa/tst.dynwidth.d */
#pragma D option quiet

BEGIN
{
	@[10, 100] = sum(1);
	@[-10, 200] = sum(2);

	printa("-->%-*d<--\n", @);
	printa("-->%*d<--\n", @);
	exit(0);
}
