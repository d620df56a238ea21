/* '?' is a pointer-sized width (after Oracle DTrace test printf/tst.widths1). */

BEGIN
{
	x = 0;
	printf("%?d|\n", x++);
	printf("%?d|\n", x++);
	printf("%-?d|\n", x++);
	printf("[%5d][%-5d][%05d][%+d][% d][%.3d][%8.3d][%-8.3d]\n", 42, 42, 42, 42, 42, 42, 42, 42);
	printf("[%*d][%-*d][%.*d][%*.*d]\n", 6, 7, 6, 7, 4, 7, 6, 3, 7);
	printf("[%.0d][%5.0d][%.0x]\n", 0, 0, 0);
	exit(0);
}
