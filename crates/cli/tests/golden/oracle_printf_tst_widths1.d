/* Oracle DTrace test printf/tst.widths1.d */

#pragma D option quiet

BEGIN
{
	printf("\n");
	x = 0;

	printf("%?d\n", x++);
	printf("%?d\n", x++);
	printf("%?d\n", x++);
	printf("%?d\n", x++);
	printf("%?d\n", x++);
	printf("%?d\n", x++);

	exit(0);
}
