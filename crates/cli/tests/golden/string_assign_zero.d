/*
 * A string variable may be assigned 0 (or NULL), as in DTrace where a string is an
 * array of char: scripts clear their string variables so; the value reads as "".
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
	printf("[%s] [%s] [%s] %d\n", self->name, g, k["key"], self->name != NULL);
	exit(0);
}
