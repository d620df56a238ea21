/* printa() with formats: keys, %@ conversions, several aggregations joined by key, histograms. */

BEGIN
{
	@c["a", 1] = count(); @c["b", 2] = count(); @c["b", 2] = count();
	@s["a", 1] = sum(10); @s["b", 2] = sum(5); @s["c", 3] = sum(-1);
	printa("%s %d %@d\n", @c);
	printa("%-4s|%3d|%@5u|%@-3d|\n", @c);
	printa("%s %d count=%@d sum=%@d\n", @c, @s);
	printa(@c, @s);
	@q = quantize(1);
	printa("q:%@d\n", @q);
	@a = avg(5); @a = avg(8);
	printa("avg %@d, again %@x\n", @a);
	printa("no keys here\n", @c);
	exit(0);
}
