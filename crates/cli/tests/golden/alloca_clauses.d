/* alloca() memory belongs to its clause: each clause allocates afresh from the same
   place, and loads through a pointer below the first allocation, past the last one, or
   from an earlier clause fault with an invalid address, and so does a bcopy() to just
   below one (Oracle's funcs/alloca tests); a new clause's memory is zeroed. */
#pragma D option quiet
BEGIN
{
	s = (char *)alloca(15);
	s[0] = 'a';
	printf("%c\n", s[14] + 'b');
}
BEGIN
{
	s2 = (char *)alloca(15);
	printf("%d %c\n", s == s2, *s2 + 'a');
}
BEGIN
{
	s = (char *)alloca(15);
	trace(s[-1]);
}
BEGIN
{
	t = (char *)alloca(15);
	trace(t[16]);
}
BEGIN
{
	trace(*s);
}
BEGIN
{
	u = (char *)alloca(4);
	bcopy("ab", u - 1, 2);
}
BEGIN
{
	exit(0);
}
ERROR
{
	printf("ERROR: fault %d\n", arg4);
}
