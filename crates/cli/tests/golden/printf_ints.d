/*
 * Integer conversions on each integer width: the argument's size and
 * signedness decide how it prints, not the length modifier.
 */

BEGIN
{
	printf("%d %i %u %x %X %o\n", 42, -42, 42, 255, 255, 8);
	printf("[%d][%d][%d][%d]\n", (char)-1, (short)-1, (int)-1, (long long)-1);
	printf("[%i][%i][%i][%i]\n", (char)-2, (short)-2, (int)-2, (long long)-2);
	printf("[%u][%u][%u][%u]\n", (char)-1, (short)-1, (int)-1, (long long)-1);
	printf("[%x][%x][%x][%x]\n", (char)-1, (short)-1, (int)-1, (long long)-1);
	printf("[%X][%o][%o]\n", (short)-1, (char)-1, (int)-1);
	printf("[%d][%u][%d][%u]\n", (unsigned char)200, (unsigned short)65000,
	    (unsigned int)4000000000, (unsigned long long)18446744073709551615);
	printf("[%lu][%ld][%lld][%llu][%lx]\n", 5, -5, -6, 7, 255);
	printf("[%d][%d]\n", 9223372036854775807, -9223372036854775807 - 1);
	printf("[%c][%3c][%-3c][%c]\n", 65, 66, 67, (char)97);
	printf("100%% [%5s]\n", "%");
	exit(0);
}
