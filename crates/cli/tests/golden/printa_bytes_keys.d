/*
 * Aggregation keys that are strings of bytes that are not UTF-8: printa() with a format
 * prints them byte for byte, and so does the default layout (padded to 50 bytes), at
 * printa() and at exit.
 */

BEGIN
{
	@a["caf\351"] = count();
	@a["\xff\xfe"] = count();
	@a["\xff\xfe"] = count();
	@b["\xe9t\xe9"] = sum(7);
	printa("%-6s=%@d|\n", @a);
	printa(@a);
	exit(0);
}
