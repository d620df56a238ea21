/* Oracle DTrace test funcs/strjoin/tst.strjoin-nested.d */

#pragma D option quiet

BEGIN
{
	trace(strjoin(
		strjoin(
			strjoin(probeprov, ":"),
			strjoin(probemod, ":")
		),
		strjoin(
			strjoin(probefunc, ":"),
			probename
		)
	      ));
	exit(0);
}

ERROR
{
	exit(1);
}
