/* Oracle DTrace test printf/tst.flags.d */

#pragma D option quiet

BEGIN
{
	printf("\n");
	printf("# %#8x\n", 0x123);
	printf("0 %08x\n", 0x123);
	printf("- %-8x\n", 0x123);
	printf("+ %+8d\n", 123);
	printf("  % 8d\n", 123);
	exit(0);
}
