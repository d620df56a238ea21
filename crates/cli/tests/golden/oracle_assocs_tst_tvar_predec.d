/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.tvar-predec.d */
#pragma D option quiet

BEGIN
{
	old = self->a["a"] = 42;
	val = --self->a["a"];

	exit(val != old - 1 || self->a["a"] != val);
}
