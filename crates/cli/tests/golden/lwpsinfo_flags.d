/*
 * curlwpsinfo->pr_flag has PR_ISSYS for kernel threads and PR_IDLE for the idle
 * threads (pid 0): sampled on every CPU, no thread is ever marked wrongly.
 */
BEGIN
{
	printf("dtrace itself: %x\n", curlwpsinfo->pr_flag & (PR_ISSYS | PR_IDLE));
}

profile-997
{
	this->flag = curlwpsinfo->pr_flag;
	@wrong["PR_IDLE"] = sum(((this->flag & PR_IDLE) != 0) != (pid == 0));
	@wrong["PR_ISSYS"] = sum(((this->flag & PR_ISSYS) != 0) !=
	    ((curthread->flags & 0x00200000) != 0));
}

tick-500ms
{
	printa("%s wrongly set or unset: %@d\n", @wrong);
	exit(0);
}
