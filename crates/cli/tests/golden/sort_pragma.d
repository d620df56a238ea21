/* Sort options given with #pragma; at exit the aggregations too come in reverse order. */

#pragma D option aggsortkey
#pragma D option aggsortrev

BEGIN
{
	@first[1] = count(); @first[3] = count(); @first[2] = count();
	@second["x"] = count(); @second["y"] = count();
	exit(0);
}
