/* Oracle DTrace test funcs/substr/tst.substr-multi-var-idx-neg-too-far.d */

#pragma D option quiet

BEGIN
{
	idx = -10;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -9;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -8;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -7;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -6;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -5;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -4;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -3;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -2;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	idx = -1;
	printf("\n% 3d % 3d %s", idx, 3, substr("abcde", idx, 3));
	exit(0);
}
