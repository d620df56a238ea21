/* Oracle DTrace test funcs/substr/tst.substr-multi-const-cnt-neg.d */

#pragma D option quiet

BEGIN
{
	printf("\n% 3d % 3d %s", 2, -10, substr("abcdefghijklmnop", 2, -10));
	printf("\n% 3d % 3d %s", 2,  -9, substr("abcdefghijklmnop", 2, -9));
	printf("\n% 3d % 3d %s", 2,  -1, substr("abcdefghijklmnop", 2, -1));
	exit(0);
}
