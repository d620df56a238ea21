/*
 * The block flags Oracle's D library names for io scripts: REQ_WRITE and REQ_SYNC
 * (masks of bio.bi_opf) and BIO_USER_MAPPED (a bit number of bio.bi_flags).
 */

BEGIN
{
	printf("%x %x %d\n", REQ_WRITE, REQ_SYNC, BIO_USER_MAPPED);
	exit(0);
}
