/*
 * Aggregation keys that are strings of bytes that are not UTF-8: printa() with a format
 * prints them byte for byte, widths counted in bytes, as DTrace's %s does. (DTrace's
 * default layout shows such a key, which C's isprint() finds unprintable, as a hex dump
 * of the whole key; that layout is not checked here.)
 */

BEGIN
{
	@a["caf\351"] = count();
	@a["\xff\xfe"] = count();
	@a["\xff\xfe"] = count();
	@b["\xe9t\xe9", 3] = sum(7);
	printa("%-6s=%@d|\n", @a);
	printa("%s %d %@d|\n", @b);
	exit(0);
}
