/* A string indexed as its chars; char pointers where a string is expected. */
#pragma D option quiet
BEGIN
{
	s = "hello/world";
	p = (char *)alloca(8);
	bcopy("ab/cd", p, 6);
	printf("%c %c %d [%s] [%s]\n", s[0], s[4], s[strlen(s) - 1] == 'd', basename(p), dirname(p));
	exit(0);
}
