/* normalize() divides the printed values; denormalize() undoes it. */

BEGIN
{
	@s["x"] = sum(100); @s["y"] = sum(250);
	normalize(@s, 10);
	printa(@s);
	printa("%s %@d\n", @s);
	denormalize(@s);
	printa("%s %@d\n", @s);
	@c = count(); @c = count(); @c = count(); @c = count();
	normalize(@c, 2);
	exit(0);
}
