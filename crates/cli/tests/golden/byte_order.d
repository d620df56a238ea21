/* Byte-order swaps and the parts of a Linux dev_t. */
#pragma D option quiet
BEGIN
{
	printf("%x %x %x\n", htons(0x1122), htonl(0x11223344), htonll(0x1122334455667788));
	printf("%x %x %x\n", ntohs(0xf0de), ntohl(0xf0debc9a), ntohll(0xf0debc9a78563412));
	printf("%x %x\n", getmajor(0xabcdef0123456789ll), getminor(0xabcdef0123456789ll));
	exit(0);
}
