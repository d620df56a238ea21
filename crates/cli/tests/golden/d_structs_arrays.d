/*
 * D's own data: a struct with a nested anonymous struct and signed and unsigned
 * bit-fields, copied whole into a clause-local, a thread-local and an associative array
 * element; a two-dimensional array (three arrays of four), its sizes and a run-time index;
 * pointers to a member and to an element, stores through them, and pointer subtraction
 * scaled by the element size.
 */

struct pt {
	int x;
	int y;
	struct {
		char a;
		short b;
	} in;
	int bf : 3;
	unsigned ubf : 5;
};

struct pt g;
self struct pt sp;
struct pt arr[int];
int m[3][4];

BEGIN
{
	g.x = 1;
	g.y = -2;
	g.in.a = 'q';
	g.in.b = 300;
	g.bf = -3;
	g.ubf = 31;
	this->c = g;
	self->sp = g;
	arr[5] = g;
	m[2][3] = 7;
	m[1][0] = m[2][3] + 1;
	printf("%d %d %c %d %d %d\n", this->c.x, this->c.y, this->c.in.a, this->c.in.b,
	    this->c.bf, this->c.ubf);
	printf("%d %d %d %d\n", self->sp.y, arr[5].in.b, arr[5].bf, sizeof (m));
	printf("%d %d %d\n", m[2][3], m[1][0], sizeof (m[1]));
	p = &g.y;
	*p = 42;
	printf("%d\n", g.y);
	q = &m[1][2];
	q[1] = 9;
	printf("%d %d\n", m[1][3], q - &m[0][0]);
	i = 3;
	printf("%d\n", m[1][i]);
	exit(0);
}
