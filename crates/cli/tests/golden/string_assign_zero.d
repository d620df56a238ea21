/*
 * A string variable may be assigned 0 (or NULL), as in DTrace: scripts clear their string
 * variables so. A cleared string is NULL (a dynamic one is deleted): it compares equal to
 * NULL, and reading its characters would fault, as in Oracle's DTrace.
 */
BEGIN
{
	self->name = "first";
	g = "global";
	k["key"] = "value";
	printf("[%s] [%s] [%s] %d\n", self->name, g, k["key"], self->name != NULL);
	self->name = 0;
	g = NULL;
	k["key"] = 0;
	printf("%d %d %d\n", self->name != NULL, g != NULL, k["key"] != NULL);
	exit(0);
}
