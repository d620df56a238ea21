/* flags: -C -q -D N=3 */
/*
 * -C runs the built-in C preprocessor: object-like and function-like macros (across
 * lines), conditionals with defined(), DTrace's predefined macros, -D from the command
 * line, and every line of the script kept on its line for the D compiler's messages.
 */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define STR(x) #x
#if defined(__SUNW_D) && __SUNW_D_64 && N == 3
#define WHICH "dtrace, 64-bit"
#else
#define WHICH "other"
#endif

BEGIN
{
	printf("%s %d %s %d\n", WHICH, MAX(N,
	    7), STR(a + b), __LINE__);
	exit(0);
}
