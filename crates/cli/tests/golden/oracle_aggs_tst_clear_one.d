/* Oracle DTrace test aggs/tst.clear-one.d */
#pragma D option quiet

BEGIN
{
	@a[1] = sum(100);
	@a[2] = sum( 20);
	@a[3] = sum(  3);
	@b[4] = sum(400);
	@b[5] = sum( 50);
	@b[6] = sum(  6);
	@c[7] = sum(700);
	@c[8] = sum( 80);
	@c[9] = sum(  9);
	clear(@b);
	printa(@a);
	printa(@b);
	printa(@c);
	exit(0);
}
