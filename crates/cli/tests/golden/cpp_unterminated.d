/* flags: -C -q */
/* An #if without its #endif: GNU cpp's words, then DTrace's. */
#if !defined(FLAG)
#define VALUE 5

BEGIN
{
	exit(VALUE);
}
