/* flags: -C -q */
/*
 * A system header through -C, as DTrace's default -Xa runs cpp: strict C99
 * (__STRICT_ANSI__, __STDC_VERSION__ 199901L), so <endian.h> gives its constants and
 * leaves out glibc's inline byte-swapping functions, which D could not parse.
 */
#include <endian.h>

BEGIN
{
	printf("%d %d %d\n", __BYTE_ORDER == __LITTLE_ENDIAN, __STDC_VERSION__, __STRICT_ANSI__);
	exit(0);
}
