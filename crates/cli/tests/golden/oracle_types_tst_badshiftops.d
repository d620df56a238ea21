#pragma D option quiet


BEGIN
{
	int_1 = 0xffff;

	nint = int_1 << -6;
	printf("%x %x\n", int_1, nint);
	nint = int_1 << 100;
	printf("%x %x\n", int_1, nint);
	exit(0);
}
