/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.misc.d */
#pragma D option quiet

BEGIN
{
	i = 0;
}

tick-10ms
/i != 5/
{
	x[123, "foo"] = 123;
	self->x[456, "bar"] = 456;
	i++;
}

tick-10ms
/i != 5/
{
	printf("x[] = %d\n", x[123, "foo"]);
	printf("self->x[] = %d\n", self->x[456, "bar"]);
}

tick-10ms
/i == 5/
{
	exit(0);
}
