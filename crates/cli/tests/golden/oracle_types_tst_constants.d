#pragma D option quiet


BEGIN
{
	decimal = 12345;
	octal = 012345;
	hexadecimal_1 = 0x12345;
	hexadecimal_2 = 0X12345;

	printf("%d %d %d %d", decimal, octal, hexadecimal_1, hexadecimal_2);
	printf("%d %o %x %x", decimal, octal, hexadecimal_1, hexadecimal_2);

	exit(0);
}
