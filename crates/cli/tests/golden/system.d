/* flags: -q -w */
/* system(): the formatted command runs with the shell, after the output before it. */
BEGIN
{
	printf("before\n");
	system("echo '%s %d'", probename, 42);
	printf("after\n");
	exit(0);
}
