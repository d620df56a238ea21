/* flags: -q -x errtags */
/* %ls takes an array of 32-bit wide characters (wchar_t []), not a char array. */

BEGIN
{
	printf("%ls\n", curthread->comm);
}
