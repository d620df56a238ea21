/* flags: -q -Z -x errtags */
/*
 * With -Z, a clause whose description matches no probe is still compiled, but it
 * has no probe to type args[] by: DTrace says so, naming the description.
 */

fbt::no_such_function_here:entry
{
	trace(args[0]);
}
