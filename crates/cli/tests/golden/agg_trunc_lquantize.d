/*
 * trunc(@, 5) of keyed lquantize() values, then a new key (after Oracle
 * DTrace test aggs/tst.trunc-lquantize-5, with 10 keys instead of 100).
 * trunc() acts when dtrace consumes its record, so the new key comes later.
 */

BEGIN
{
	i = 0;
	j = 0;
}

tick-1ms
/i < 10/
{
	@[100 + i] = lquantize(i + 1, 0, 150, 1, 10000 + i);
	@[100 + i] = lquantize(i + 2, 0, 150, 1, 10000 + i);
	@[100 + i] = lquantize(i + 3, 0, 150, 1, 10000 + i);
	@[100 + i] = lquantize(i + 4, 0, 150, 1, 10000 + i);
	i++;
}

tick-1ms
/i == 10/
{
	trunc(@, 5);
	i++;
}

/* Give the consumer time to act on trunc() before adding more. */
tick-1ms
/i > 10 && j++ == 300/
{
	@[200 + i] = lquantize(i + 1, 0, 150, 1, 20000 + i);
	@[200 + i] = lquantize(i + 2, 0, 150, 1, 20000 + i);
	@[200 + i] = lquantize(i + 3, 0, 150, 1, 20000 + i);
	@[200 + i] = lquantize(i + 4, 0, 150, 1, 20000 + i);
	exit(0);
}
