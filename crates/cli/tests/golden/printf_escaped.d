/*
 * %S prints a string with C escapes for what is not printable (letters where C has
 * them, octal otherwise), %C a character; width and precision count the escaped text.
 */
BEGIN
{
	printf("[%S]\n", "a\tb\001\"\\ c\n\177");
	printf("[%C] [%C] [%C]\n", 10, 'A', 0);
	printf("[%12S] [%-6.3S]\n", "x\ty", "abcdef");
	exit(0);
}
