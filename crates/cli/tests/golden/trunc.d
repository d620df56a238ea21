/* trunc(): keep the n largest (n > 0), the -n smallest (n < 0), or none. */

BEGIN
{
	@t[1] = sum(10); @t[2] = sum(20); @t[3] = sum(30); @t[4] = sum(40); @t[5] = sum(50);
	@b[1] = sum(10); @b[2] = sum(20); @b[3] = sum(30); @b[4] = sum(40); @b[5] = sum(50);
	@n[1] = sum(10); @n[2] = sum(20);
	@z = count();
	trunc(@t, 2);
	trunc(@b, -2);
	trunc(@n);
	exit(0);
}
