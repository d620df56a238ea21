/* Oracle DTrace test printf/tst.wp.d */

#pragma D option quiet

BEGIN
{
	printf("\n");
	x = 0;

	printf("%0.0s\n", "hello");
	printf("%1.1s\n", "hello");
	printf("%2.2s\n", "hello");
	printf("%3.3s\n", "hello");
	printf("%4.4s\n", "hello");
	printf("%5.5s\n", "hello");
	printf("%6.6s\n", "hello");
	printf("%7.7s\n", "hello");
	printf("%8.8s\n", "hello");
	printf("%9.9s\n", "hello");

	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");
	printf("%*.*s\n", x, x++, "hello");

	exit(0);
}
