/* The printf flags (after Oracle DTrace test printf/tst.flags). */

BEGIN
{
	printf("\n");
	printf("# %#8x\n", 0x123);
	printf("0 %08x\n", 0x123);
	printf("- %-8x\n", 0x123);
	printf("+ %+8d\n", 123);
	printf("  % 8d\n", 123);
	printf("#o %#o %#X %#x\n", 8, 255, 0);
	printf("-0 %-08d|%0-8d|\n", 5, 5);
	exit(0);
}
