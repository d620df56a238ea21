/* flags: -C -q */
/* A header included by the preprocessor that is not UTF-8: its bytes reach the program. */

#include "latin1_header.h"

BEGIN
{
	printf("%s|%d\n", GREETING, strlen(GREETING));
	exit(0);
}
