/* Oracle DTrace test arithmetic/tst.complex.d */
#pragma D option quiet

BEGIN
{
	i = 0;
	i = i++ + ++i;
	printf("The value of i is %d\n", i);
	i = i-- - --i;
	printf("The value of i is %d\n", i);
	i = i-- + ++i;
	printf("The value of i is %d\n", i);
	i += i++ + -- i + ++i - ++i * i ;
	printf("The value of i is %d\n", i);
	i -= i++ * 3;
	printf("The value of i is %d\n", i);
	i = i++/i--+i++-++i-++i;
	printf("The value of i is %d\n", i);
	exit (0);
}
