#pragma D option quiet


BEGIN
{
	int_1 = 0xffff;
	int_2 = 0;
	int_3 = 0x0f0f;


	printf("%x %x %x\n",  int_1 & int_2, int_1 & int_3, int_2 & int_3);
	printf("%x %x %x\n",  int_1 | int_2, int_1 | int_3, int_2 | int_3);
	printf("%x %x %x\n",  int_1 ^ int_2, int_1 ^ int_3, int_2 ^ int_3);

	printf("%x\n", int_1 & int_2 & int_3);
	printf("%x\n", int_1 & int_2 ^ int_3);
	printf("%x\n", int_1 & int_2 | int_3);
	printf("%x\n", int_1 | int_2 & int_3);
	printf("%x\n", int_1 | int_2 ^ int_3);
	printf("%x\n", int_1 | int_2 | int_3);
	printf("%x\n", int_1 ^ int_2 & int_3);
	printf("%x\n", int_1 ^ int_2 ^ int_3);
	printf("%x\n", int_1 ^ int_2 | int_3);

	exit(0);
}
