/* flags: -q -w -c 'sleep 10' */
/* raise(): the signal goes to the process that fired the probe; sleep is killed at once. */
syscall::nanosleep:entry,
syscall::clock_nanosleep:entry
/pid == $target/
{
	raise(SIGKILL);
}
END
{
	printf("done\n");
}
