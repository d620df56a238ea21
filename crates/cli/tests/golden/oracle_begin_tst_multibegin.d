/* flags: -x errtags */
/* Oracle DTrace test begin/tst.multibegin.d */
#pragma D option quiet

BEGIN
{
	printf("Begin fired first\n");
}
BEGIN
{
	printf("Begin fired second\n");
}
BEGIN
{
	printf("Begin fired third\n");
}
BEGIN
{
	printf("Begin fired fourth\n");
}
BEGIN
{
	printf("Begin fired fifth\n");
	exit(0);
}
