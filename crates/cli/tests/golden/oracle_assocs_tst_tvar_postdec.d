/* flags: -x errtags */
/* Oracle DTrace test assocs/tst.tvar-postdec.d */
#pragma D option quiet

BEGIN
{
	old = self->a["a"] = 42;
	val = self->a["a"]--;

	exit(val != old || self->a["a"] != old - 1);
}
