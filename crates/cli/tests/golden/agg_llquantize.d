/* llquantize(): log-linear buckets, factor 10, magnitudes 0 to 2, 10 steps each. */

BEGIN
{
	@l = llquantize(0, 10, 0, 2, 10);
	@l = llquantize(5, 10, 0, 2, 10);
	@l = llquantize(5, 10, 0, 2, 10);
	@l = llquantize(15, 10, 0, 2, 10);
	@l = llquantize(250, 10, 0, 2, 10);
	@l = llquantize(5000, 10, 0, 2, 10);
	exit(0);
}
