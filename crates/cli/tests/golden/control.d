/* Predicates, if/else, the ternary operator, globals, associative arrays, self-> and this->. */

BEGIN
{
	x = 5;
	a["k"] = 10;
	a["j"] = 20;
	self->t = 3;
	this->u = 4;
	if (x > 3) {
		printf("big\n");
	} else {
		printf("small\n");
	}
	if (x > 10)
		printf("no\n");
	else if (x == 5)
		printf("five\n");
	else
		printf("no\n");
	printf("%s %s\n", x > 3 ? "yes" : "no", x < 3 ? "yes" : "no");
	printf("%d %d %d %d\n", a["k"], a["j"], a["none"], self->t + this->u);
}

BEGIN
/x == 5/
{
	printf("predicate true\n");
}

BEGIN
/x != 5/
{
	printf("predicate false\n");
}

BEGIN
/self->t == 3 && a["k"] == 10/
{
	printf("thread-local and array in predicate\n");
	exit(0);
}
