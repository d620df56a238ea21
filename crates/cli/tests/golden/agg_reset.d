/* printa() of each aggregation, twice: same output each time (after Oracle DTrace test aggs/tst.reset). */

BEGIN
{
	@a = sum(10); @b = stddev(10); @c = count(); @d = avg(10); @e = quantize(10);
	@a = sum(20); @b = stddev(20); @c = count(); @d = avg(20); @e = quantize(20);
	@a = sum(30); @b = stddev(30); @c = count(); @d = avg(30); @e = quantize(30);
	@a = sum(40); @b = stddev(40); @c = count(); @d = avg(40); @e = quantize(40);
	@a = sum(50); @b = stddev(50); @c = count(); @d = avg(50); @e = quantize(50);
	exit(0);
}

END
{
	printa(@a); printa(@b); printa(@c); printa(@d); printa(@e);
	printa(@a); printa(@b); printa(@c); printa(@d); printa(@e);
}
