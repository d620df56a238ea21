/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.gvar-preinc.d */
#pragma D option quiet

BEGIN
{
	old = a["a"] = 42;
	val = ++a["a"];

	exit(val != old + 1 || a["a"] != val);
}
