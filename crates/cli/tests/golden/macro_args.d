/* args: hello 42 7 */
/* Macro arguments: $1 as a string with $$1, integers as $2 and $3; $0 is the script. */

BEGIN
{
	printf("%s %d %d %s\n", $$1, $2, $3, $$0);
	printf("%d\n", $2 + $3);
	exit(0);
}
