/* quantize(): zero, positive and negative values, a keyed one, and an empty range. */

BEGIN
{
	@q = quantize(0); @q = quantize(1); @q = quantize(2); @q = quantize(3);
	@q = quantize(100);
	@n = quantize(-5); @n = quantize(-1); @n = quantize(3);
	@k["sh"] = quantize(1); @k["sh"] = quantize(1);
	exit(0);
}
