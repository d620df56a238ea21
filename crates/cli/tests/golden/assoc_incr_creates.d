/*
 * ++ and -- create an associative array (of int64_t) on its first use, as they
 * create a scalar: a read of an element not stored yet gives 0.
 */
BEGIN
{
	this->old = hits[3 % 5]++;
	hits[3 % 5]++;
	--left["a", 1];
	self->depth[pid]++;
	printf("%d %d %d %d %d\n", this->old, hits[3], left["a", 1],
	    self->depth[pid], hits[4]);
	exit(0);
}
