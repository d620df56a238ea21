/* Inlines with parameters, used as arrays: each argument is evaluated once, converted to
   its parameter's type, and the inline's value is typed with the parameters bound. */
#pragma D option quiet

inline int sq[int x] = x * x;
inline int add[int x, int y] = x + y;
inline string pick[int i, string a, string b] = i ? a : b;
inline char low[int x] = x;

BEGIN
{
	n = 3;
	printf("%d %d %d\n", sq[7], sq[sq[2]], add[n++, n]);
	printf("%s %s\n", pick[1, "yes", "no"], pick[0, "yes", "no"]);
	printf("%d\n", low[0x141]);
	exit(0);
}
