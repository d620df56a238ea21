/*
 * strtok: tokens of a string, the state kept across clauses of one firing; no
 * token is NULL.
 */
#pragma D option quiet
BEGIN
{
	this->s = ",,,Carrots,,Barley,Oatmeal,,,Beans,";
	printf("[%s]\n", strtok(this->s, ","));
}
BEGIN
{
	printf("[%s]\n", strtok(NULL, ","));
	printf("[%s]\n", strtok(NULL, ",a"));
	printf("[%s]\n", strtok(NULL, ""));
	printf("%s\n", strtok(NULL, ",") == NULL ? "NULL" : "not NULL");
	printf("[%s] %d\n", strtok("foo", ""), strtok("", "foo") == NULL);
	printf("[%s]\n", strtok("abcdefABCdef", "abcABC"));
	printf("[%s]\n", strtok(NULL, "f"));
}
BEGIN
{
	exit(0);
}
