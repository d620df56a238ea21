#pragma D option quiet

enum numbers_1 {
	zero,
	one,
	two
};

enum numbers_2 {
	null,
	first,
	second
};

tick-1
/zero >= one || second <= first || zero == second/
{
	printf("Shouldn't end up here (1)\n");
	printf("zero = %d; one = %d; two = %d", zero, one, two);
	printf("null = %d; first = %d; second = %d", null, first, second);
	exit(1);
}

tick-1
/second < one || two > second || null == first/
{
	printf("Shouldn't end up here (2)\n");
	printf("zero = %d; one = %d; two = %d", zero, one, two);
	printf("null = %d; first = %d; second = %d", null, first, second);
	exit(1);
}

tick-1
/first < two && second > one && one != two && zero != first/
{
	exit(0);
}
