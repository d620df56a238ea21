/*
 * curcpu is the cpuinfo_t of the CPU a probe fires on (sched.d): its cpu_id is cpu;
 * Linux has no processor sets (-1) or locality groups (0).
 */
BEGIN
{
	printf("%d %d %d\n", curcpu->cpu_id == cpu, curcpu->cpu_pset, curcpu->cpu_lgrp);
}

profile-997
{
	@wrong = sum(curcpu->cpu_id != cpu);
}

tick-300ms
{
	printa("wrong: %@d\n", @wrong);
	exit(0);
}
