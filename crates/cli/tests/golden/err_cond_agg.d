/* flags: -q -x errtags */
/* An aggregation assignment as an arm of ?: (its value has the dynamic type). */

BEGIN
{
	verbose = 1;
	verbose ? @calls["BEGIN"] = count() : 1;
}
