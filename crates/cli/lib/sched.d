/*
 * sched.d -- CPUs as the sched provider describes them.
 *
 * Part of dtrace's built-in D library (see procfs.d).  The sched provider's enqueue and
 * dequeue probes give the CPU whose run queue changed as a cpuinfo_t, translated here
 * from the CPU number; curcpu is the CPU a probe fires on.  Linux has no processor
 * sets or locality groups: those members are -1 and 0.
 */

#pragma D depends_on provider sched

typedef struct cpuinfo {
	processorid_t cpu_id;	/* CPU number */
	int cpu_pset;		/* processor set (none on Linux: -1) */
	int cpu_chip;		/* physical chip (not tracked: 0) */
	int cpu_lgrp;		/* locality group (0) */
} cpuinfo_t;

translator cpuinfo_t < int C > {
	cpu_id = C;
	cpu_pset = -1;
	cpu_chip = 0;
	cpu_lgrp = 0;
};

/* The CPU the probe fires on. */
inline cpuinfo_t *curcpu = xlate <cpuinfo_t *> (cpu);
