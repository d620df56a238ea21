/*
 * curcpu, the current CPU's cpuinfo_t, and its members as pset, chip and lgrp (Linux has
 * no processor sets or locality groups: -1 and 0; the chip is not tracked: 0). Addresses
 * of D's storage (curcpu, alloca memory) made numbers can be computed with.
 */
BEGIN
{
	printf("%d %d %d %d %d\n", curcpu->cpu_id == cpu, pset, chip, lgrp, (int64_t)curcpu != -1);
	printf("%d %d\n", ((int64_t)curcpu >> 8) < 0, ((uintptr_t)alloca(8) & 7) == 0);
	exit(0);
}
