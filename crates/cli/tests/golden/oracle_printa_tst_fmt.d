/* flags: -x errtags */
/* Oracle DTrace test printa/tst.fmt.d */
#pragma D option quiet

BEGIN
{
	@a = count();
	printa("%@u", @a);
	exit(0);
}
