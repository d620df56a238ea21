/*
 * Bytes that are not UTF-8 in format strings and strings (D strings are bytes): printed
 * byte for byte by printf(), with widths and precisions counted in bytes; %c of such a
 * byte, %S escaping it in octal; strjoin() and strlen() of them.
 */

BEGIN
{
	s = "caf\351";
	printf("\xff\376|%s|%6s|%-6s|%.3s|\n", s, s, s, s);
	printf("%c%c|%S|%d\n", 0xe9, 0xff, s, strlen(s));
	printf("%s|%d\n", strjoin(s, "\xc3\xa9"), strlen(strjoin(s, "\xc3\xa9")));
	exit(0);
}
