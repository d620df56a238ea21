/* flags: -q -w -x errtags */
/* system( ) formats are checked as printf( )'s, and their messages name system( ). */

BEGIN
{
	system("echo %s %d", "a");
}
