/* flags: -x errtags */
/* Oracle DTrace test printa/tst.def.d */
#pragma D option quiet

BEGIN
{
	@a = count();
	printa(@a);
	exit(0);
}
