/* lquantize(): the underflow (< base) and overflow (>= limit) rows. */

BEGIN
{
	@l = lquantize(-1, 0, 10, 2); @l = lquantize(3, 0, 10, 2);
	@l = lquantize(3, 0, 10, 2); @l = lquantize(4, 0, 10, 2);
	@l = lquantize(12, 0, 10, 2);
	@m = lquantize(5, 0, 100, 10);
	@o = lquantize(1000, 0, 100, 10);
	exit(0);
}
