/*
 * Storing 0 into a dynamic variable deletes it, a struct, union or string one too (as
 * DTrace allows 0 there for that): read again, it is zero (a string NULL); others stay.
 */
struct s { int a; char c; };
union u { int i; char c; };
this struct s sv;
this union u uv;

BEGIN
{
	this->sv.a = 7;
	this->sv.c = 'x';
	this->uv.i = 65;
	a[1] = this->sv;
	a[2] = this->sv;
	self->u = this->uv;
	self->str = "text";
	a[1] = 0;
	self->u = 0;
	self->str = 0;
	printf("%d %d %d %d %d %d\n", a[1].a, a[1].c, a[2].a, a[2].c, self->u.i, self->str == NULL);
	exit(0);
}
