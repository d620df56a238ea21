/* Oracle DTrace test arithmetic/tst.moddiv.d */
#pragma D option quiet

BEGIN {
	x = 19; y = 5;
	trace(( x) / ( y)); trace (( x) % ( y));
	trace(( x) / (-y)); trace (( x) % (-y));
	trace((-x) / ( y)); trace ((-x) % ( y));
	trace((-x) / (-y)); trace ((-x) % (-y));
	exit(0)
}
