/* progenyof(): the current process, its ancestors (init included), and no other. */
#pragma D option quiet
BEGIN
{
	printf("%d %d %d %d\n", progenyof(pid), progenyof(ppid), progenyof(1), progenyof(-1));
	exit(0);
}
