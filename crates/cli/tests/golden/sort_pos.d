/* aggsortpos picks the aggregation a joined printa() sorts by; set with setopt(). */

BEGIN
{
	@x["a"] = sum(1); @x["b"] = sum(2); @x["c"] = sum(3);
	@y["a"] = sum(30); @y["b"] = sum(10); @y["c"] = sum(20);
	printa("%s %@d %@d\n", @x, @y);
	setopt("aggsortpos", "1");
	printa("%s %@d %@d\n", @x, @y);
	setopt("aggsortrev");
	printa("%s %@d %@d\n", @x, @y);
	exit(0);
}
