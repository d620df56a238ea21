/* clear() zeroes the values but keeps the keys. */

BEGIN
{
	@c["a"] = count(); @c["b"] = count(); @c["b"] = count();
	@s = sum(7);
	printa("%s %@d\n", @c);
	clear(@c);
	done = 0;
}

tick-1ms
/!done/
{
	done = 1;
	printa("%s %@d\n", @c);
	exit(0);
}
