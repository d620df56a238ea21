/* flags: -q -x errtags */
/*
 * DTrace reports an error of the predicate's outermost operator at the line of the
 * token after the predicate (its parser makes that node once it has read the '{').
 */
BEGIN
/"char" & "foo"/
{
	exit(0);
}
