/* A firing sees one timestamp, in every clause; caller and ucaller are addresses. */
#pragma D option quiet
BEGIN
{
	a = timestamp;
	this->b = timestamp;
	printf("%d %d\n", this->b - a, sizeof(caller) == 8 && sizeof(ucaller) == 8);
}
BEGIN
{
	printf("%d\n", timestamp - a);
	exit(0);
}
