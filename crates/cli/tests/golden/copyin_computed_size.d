/* flags: -q -c '/bin/mkdir /proc/dtrace-copyin-test' */
/*
 * copyin() with a size computed at run time copies that many bytes (the buffer is
 * zeroed, so the copy reads as a string); a size past scratchsize (256) is an invalid
 * size (fault 10, DTRACEFLT_BADSIZE), raised as a fault that abandons the clause.
 */
syscall::mkdir:entry
/pid == $target/
{
	this->len = strlen(copyinstr(arg0));
	printf("%s|%s|\n", stringof(copyin(arg0, this->len - 5)),
	    stringof(copyin(arg0, this->len > 1 ? 1 : this->len)));
}

syscall::mkdir:entry
/pid == $target/
{
	this->big = copyin(arg0, this->len * 100);
	printf("not reached\n");
}

ERROR
{
	printf("fault %d\n", arg4);
}
