/* trace() in quiet mode prints bare values (after Oracle DTrace test aggs/tst.signedkeys). */

BEGIN
{
	trace((char)-2); trace("\n");
	trace((short)-2); trace("\n");
	trace(-2); trace("\n");
	trace((long long)-2); trace("\n");
	trace((unsigned char)254); trace("\n");
	trace((unsigned short)65534); trace("\n");
	trace((unsigned int)4294967294); trace("\n");
	trace((unsigned long long)18446744073709551614); trace("\n");
	trace("a"); trace("b"); trace(1); trace("\n");
	exit(0);
}
