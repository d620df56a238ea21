/* A null string faults in a string subroutine, and strtok(NULL, ...) before any string does. */
#pragma D option quiet
BEGIN
{
	trace(strtok(NULL, "!"));
}
BEGIN
{
	strlen(0);
}
BEGIN
{
	trace(substr(NULL, 1));
}
BEGIN
{
	printf("after the faults\n");
	exit(0);
}
ERROR
{
	printf("ERROR: fault %d\n", arg4);
}
