/* flags: -q -x errtags */
/* Oracle DTrace test assocs/tst.collision.d */
BEGIN
{
	assoc[0x1234] = 1;
	self->tls_assoc[1] = 0x1111;
	self->tls_assoc[1] = 0;
	self->tls_assoc[1] = 0x2222;

	printf("%x / %x\n", assoc[0x1234], self->tls_assoc[1]);

	exit(assoc[0x1234] == 1 && self->tls_assoc[1] == 0x2222 ? 0 : 1);
}
