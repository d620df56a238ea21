/* flags: -x errtags */
/* Oracle DTrace test printa/tst.manyval.d */
#pragma D option quiet

BEGIN
{
	@a = count();
	printa("%@u %@u %@u %@u %@u %@u %@u\n", @a);
	exit(0);
}
