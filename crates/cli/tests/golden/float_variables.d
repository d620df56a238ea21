/* float and double variables hold their bits: they are stored and printed with %e, %f and
   %g (DTrace does no floating-point arithmetic). */
#pragma D option quiet

double d;
float f;

BEGIN
{
	printf("%e %f %g %E %G\n", d, d, d, d, d);
	printf("%e %f %g\n", f, f, f);
	exit(0);
}
