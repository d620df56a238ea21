/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.gvar-postdec.d */
#pragma D option quiet

BEGIN
{
	old = a["a"] = 42;
	val = a["a"]--;

	exit(val != old || a["a"] != old - 1);
}
