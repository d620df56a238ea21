/* flags: */
/*
 * Without -q: the heading once, then each firing's CPU, probe ID and
 * FUNCTION:NAME (BEGIN is probe 1, END probe 2) followed by its records.
 */

BEGIN
{
	trace(1);
	trace("hello");
	trace((char)-2);
	trace((short)3);
	trace((unsigned short)4);
	trace((long long)-5);
	trace((unsigned long long)7);
	trace((unsigned int)8);
}

BEGIN
{
	exit(0);
}

END
{
	trace(-1);
}
