/* flags: -q -c '/usr/bin/env /bin/true first second' */
/*
 * execargs is the current process's argument list, blank-separated, as ps shows it;
 * curpsinfo->pr_psargs is the same (cut to 80 characters), read after the exec.
 */
proc:::exec-success
/pid == $target/
{
	printf("[%s] [%s] [%s]\n", execargs, curpsinfo->pr_psargs,
	    curpsinfo->pr_fname);
}

syscall::exit_group:entry
/pid == $target/
{
	printf("exit: [%s]\n", execargs);
}
