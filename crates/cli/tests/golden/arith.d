/* Integer arithmetic, bitwise, logical and relational operators. */

BEGIN
{
	printf("%d %d %d %d\n", 7 / 2, -7 / 2, 7 % 3, -7 % 3);
	printf("%d %d %d %d %d\n", 1 << 4, 256 >> 2, 5 & 3, 5 | 3, 5 ^ 3);
	printf("%d %d %d %d\n", ~0, !0, !5, -(3));
	printf("%d %d %d\n", 1 && 0, 1 || 0, 1 ^^ 1);
	printf("%d %d %d %d\n", 3 < 4, 3 >= 4, 3 == 3, 3 != 3);
	x = 10; x += 5; x -= 3; x *= 2; x /= 4; x %= 4;
	y = 1; y <<= 3; y |= 1; y &= 3; y ^= 6;
	z = 0; z++; z++; z--;
	printf("%d %d %d\n", x, y, z);
	printf("%d %u\n", 0x7fffffff + 1, (unsigned int)-1 + 2);
	exit(0);
}
