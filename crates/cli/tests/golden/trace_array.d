/*
 * trace() of an array shows its bytes, as DTrace's trace() shows data it takes by
 * reference (Oracle's actions/trace/tst.array): a char array too, unless stringof() or a
 * cast makes a string of it.
 */
#pragma D option quiet
int a[3];
BEGIN
{
	a[1] = 258;
	trace(curthread->comm);
	trace(a);
	trace(stringof(curthread->comm));
	printf("\n");
	exit(0);
}
