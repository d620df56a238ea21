/* %s with widths and precisions; strjoin(), strlen() and string comparison. */

BEGIN
{
	s = "hello";
	printf("[%s][%10s][%-10s][%.2s][%10.3s][%-10.3s][%.0s]\n", s, s, s, s, s, s, s);
	printf("[%*s][%-*s][%.*s]\n", 7, "ab", 7, "ab", 1, "ab");
	printf("[%s][%d]\n", strjoin(s, ", world"), strlen(strjoin(s, "!")));
	printf("[%s]\n", "");
	printf("%d %d %d %d %d %d\n", "abc" < "abd", "abc" == "abc", "b" > "abc",
	    "abc" != "abc", "ab" <= "abc", s >= "hello");
	exit(0);
}
