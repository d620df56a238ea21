/* count/sum/avg/min/max/stddev without keys, printed at exit in order of first use. */

BEGIN
{
	@c = count(); @c = count(); @c = count();
	@s = sum(10); @s = sum(-3);
	@a = avg(10); @a = avg(3);
	@an = avg(-7); @an = avg(-2);
	@mi = min(10); @mi = min(-3);
	@ma = max(10); @ma = max(-3);
	@sd = stddev(2); @sd = stddev(4); @sd = stddev(4); @sd = stddev(4);
	@sd = stddev(5); @sd = stddev(5); @sd = stddev(7); @sd = stddev(9);
	exit(0);
}
