/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.cpyarray.d */
#pragma D option quiet

this int x;

BEGIN
{
	a["abc", 123] = 123;
}

tick-10ms
{
	this->x = a["abc", 123]++;
	printf("The value of x is %d\n", this->x);
}

tick-10ms
{
	this->x = a["abc", 123]++;
	printf("The value of x is %d\n", this->x);
}

tick-10ms
{
	this->x = a["abc", 123]++;
	printf("The value of x is %d\n", this->x);
	exit(0);
}
