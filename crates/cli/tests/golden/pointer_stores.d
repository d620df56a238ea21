/*
 * Stores through pointers: into a global array (an array decays to a pointer to its first
 * element), a member of a global struct, a this-> array and alloca'd memory. A store
 * past what alloca handed out, or before it, faults with DTrace's "invalid address" and
 * the clause's output is discarded.
 */

int a[3];
struct s {
	int x;
	char c[4];
} st;
this int t[4];

BEGIN
{
	p = a;
	p[2] = 5;
	*(p + 1) = 7;
	q = &st.c[1];
	*q = 'z';
	st.c[0] = 'y';
	r = (int *)alloca(8);
	r[1] = 9;
	u = this->t;
	u[3] = 11;
	printf("%d %d %d %s %d %d\n", a[0], a[1], a[2], stringof(st.c), r[1], this->t[3]);
}

BEGIN
{
	x = (int *)alloca(sizeof (int));
	printf("not shown\n");
	*(x + 2) = 3;
}

BEGIN
{
	x = (int *)alloca(sizeof (int));
	*(x - 2) = 3;
}

ERROR
{
	printf("ERROR: fault %d\n", arg4);
}

BEGIN
{
	exit(0);
}
