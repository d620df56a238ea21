/*
 * tracemem(addr, size[, dynsize]): a hex dump of kernel (here D) memory, 16 bytes a line;
 * dynsize shows fewer bytes (all when negative, none when zero), never more than size.
 * An address that cannot be read faults.
 */

struct {
	char c[14];
	int n;
} b;

BEGIN
{
	b.c[0] = 'L';
	b.c[1] = 'i';
	b.c[2] = 'n';
	b.c[3] = 'u';
	b.c[4] = 'x';
	b.n = 0x01020304;
	tracemem(&b.c[0], 14);
	tracemem(&b.c[0], 14, -1);
	tracemem(&b.c[0], 14, 0);
	tracemem(&b.c[0], 14, 2);
	tracemem(&b.c[0], 20, 30);
}

BEGIN
{
	tracemem(0, 8);
}

ERROR
{
	printf("ERROR: fault %d\n", arg4);
}

BEGIN
{
	exit(0);
}
