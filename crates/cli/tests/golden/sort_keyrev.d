/* flags: -q -x aggsortkey -x aggsortrev */

BEGIN
{
	@["b", 1] = sum(30); @["a", 2] = sum(20); @["c", 0] = sum(10); @["a", 1] = sum(40);
	@["d", 5] = sum(20);
	printa("%s %d %@d\n", @);
	exit(0);
}
