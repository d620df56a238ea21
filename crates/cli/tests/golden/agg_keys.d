/*
 * Integer, string and multiple keys.  Rows sort by value, ties by key
 * (integers compared unsigned, so -1 sorts after 1).
 */

BEGIN
{
	@k[1] = count(); @k[2] = count(); @k[2] = count(); @k[-1] = count();
	@str["b"] = sum(2); @str["a"] = sum(3); @str["c"] = sum(1);
	@m["x", 1] = count(); @m["y", 2] = count(); @m["x", 3] = count(); @m["x", 3] = count();
	exit(0);
}
