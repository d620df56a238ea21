/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.clean-tuple.d */
#pragma D option quiet

BEGIN {
	x["foo"] = 1234;
	x["long key her"] = 56789;

	trace(x["foo"]);
	trace(x["long key her"]);

	exit(x["foo"] != 1234 || x["long key her"] != 56789);
}

ERROR
{
	exit(1);
}
