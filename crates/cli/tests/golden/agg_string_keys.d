/* String keys built with strjoin(); long keys widen the column. */

BEGIN
{
	@[strjoin("ab", "cd")] = count();
	@["a key longer than fifty characters, which is not cut short"] = count();
	@[""] = count(); @[""] = count();
	exit(0);
}
