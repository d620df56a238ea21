/* flags: -q -w */
/*
 * system() runs its printf-formatted command when the consumer reads the record, after
 * everything printed before it and before what follows (Oracle's tst.system-str and
 * DTrace's documentation of system()).
 */
BEGIN
{
	printf("before\n");
	system("echo %s %d", "from the shell", 42);
	printf("after\n");
}

BEGIN
{
	system("echo second clause");
	exit(0);
}
