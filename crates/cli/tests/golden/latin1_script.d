/*
 * A script that is not UTF-8 (Latin-1, say: café): its bytes are taken as they are, as
 * DTrace takes them. In a comment they change nothing; in a string or character constant
 * they are the bytes themselves, escaped or not.
 */

BEGIN
{
	printf("café|%s|%d|%d|%c\n", "ÿ\þ", 'é', strlen("été"), 'é');
	@["clé"] = count();
	printa("%s %@d\n", @);
	exit(0);
}
