/* flags: -q -x errtags */
/* A stack key is printed only by %k. */
BEGIN
{
	@[stack()] = count();
	printa("%p\n", @);
	exit(0);
}
