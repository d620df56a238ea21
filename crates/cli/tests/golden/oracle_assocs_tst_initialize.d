/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.initialize.d */
#pragma D option quiet

this int x;

BEGIN
{
	printf("the value of x is %d\n", this->x);
	exit(0);
}
