#pragma D option quiet

enum my_enum {
	zero,
	one = 1,
	two,
	three,
	four = 4,
	minimum = -2147483648,
	maximum = 2147483647
};

BEGIN
{
	exit(0);
}
