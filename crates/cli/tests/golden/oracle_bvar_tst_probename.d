/* Oracle DTrace test variables/bvar/tst.probename.d */
#pragma D option quiet

BEGIN
{
	trace(probename);
}

BEGIN
/probename == "BEGIN"/
{
	exit(0);
}

BEGIN
{
	exit(1);
}

ERROR {
	exit(1);
}
