/* flags: -q -x errtags */
/* Oracle DTrace test assocs/tst.orthogonality.d */
uint64_t b[uint64_t];

BEGIN
{
	self->a = 0xbad;
}

BEGIN
/b[(uint64_t)curthread] == 0/
{
	exit(0);
}

BEGIN
{
	printf("value should be 0; value is %x!", b[(uint64_t)curthread]);
	exit(1);
}
