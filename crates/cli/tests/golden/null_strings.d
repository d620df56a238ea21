/*
 * NULL strings, as Oracle's DTrace has them: a string variable may hold NULL,
 * which compares below every string and equal only to NULL; unset elements of
 * associative arrays and thread-locals are NULL, while "" is a string and is
 * kept; strchr, strrchr, strstr and strtok give NULL when they find nothing; a
 * string plus an offset is the string at that address; a char * may hold a
 * string's address.  Reading a NULL string faults: ERROR fires, the clause is
 * abandoned and the next clauses run.
 */

#pragma D option strsize=16

string g;
char *p;

BEGIN
{
	g = "global";
	g = NULL;
	this->l = "local";
	this->l = NULL;
	self->t = "thread";
	self->t = NULL;
	a["x"] = "assoc";
	a["x"] = NULL;
	a["empty"] = "";
	printf("%d %d %d %d\n", g == NULL, this->l == NULL, self->t == NULL,
	    a["x"] == NULL);
	printf("%d %d %d\n", a["empty"] == NULL, a["none"] == NULL,
	    a["empty"] == "");
	printf("%d %d %d %d\n", g < "", "" > g, g == g, g != "a");
	printf("%d %d %d %d\n", strchr("abc", 'z') == NULL,
	    strrchr("abc", 'z') == NULL, strstr("abc", "d") == NULL,
	    strstr("abc", "") == NULL);
	printf("%s %s %s\n", "abcdef" + 2, 1 + strjoin("xy", "z"), g == NULL ?
	    "null" : g);
	p = probeprov;
	self->s = "ABC";
	printf("%c %c %c\n", p[0], self->s[1], (g + 1 == NULL) + 'a');
}

BEGIN
{
	trace(strtok("a,b", ","));
	trace(strtok(NULL, ","));
	trace(strtok(NULL, ","));
	printf("not reached\n");
}

BEGIN
{
	printf("%s\n", a["none"]);
}

BEGIN
{
	printf("%c\n", g[1]);
}

BEGIN
{
	exit(0);
}

ERROR
{
	printf("ERROR: fault %d at %d\n", arg4, arg5);
}
