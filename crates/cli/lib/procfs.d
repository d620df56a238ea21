/*
 * procfs.d -- processes and threads as DTrace programs know them, for Linux.
 *
 * This file is part of dtrace's D library: it is built into the dtrace binary and
 * loaded before every program (-xnolibs skips it; a file of the same name in a -L or
 * -xlibdir directory replaces it).  It gives D programs the Solaris-style views of a
 * process (psinfo_t) and of a thread (lwpsinfo_t), translated from the kernel's
 * struct task_struct, and the current thread's views curpsinfo and curlwpsinfo.
 *
 * Translation is lazy: curpsinfo->pr_pid reads task_struct.tgid and nothing else, so a
 * member that needs memory that cannot be read (a kernel thread has no mm) only matters
 * to a script that asks for it.
 *
 * As in Oracle's DTrace for Linux, members Linux keeps no value for are declared but not
 * translated: a script using one is refused (D_XLATE_NOCONV).
 *
 * Library files are parsed without the kernel's type names: write kernel types with
 * their struct/union/enum tags, or as D's built-in typedefs (uint64_t, pid_t, ...).
 */

/*
 * The proc and sched providers' arguments are translated with these types: a script
 * naming those providers loads this file even if it names nothing else of it.
 */
#pragma D depends_on provider proc
#pragma D depends_on provider sched

/* Thread states (lwpsinfo_t.pr_state). */
inline char SSLEEP = 1;		/* waiting for an event (interruptible or not) */
inline char SRUN = 2;		/* runnable, waiting for a CPU */
inline char SZOMB = 3;		/* exited, not yet reaped */
inline char SSTOP = 4;		/* stopped by a signal or a tracer */
inline char SIDL = 5;		/* being created */
inline char SONPROC = 6;	/* running on a CPU */
inline char SWAIT = 7;		/* waiting to become runnable */

/* Data models (psinfo_t.pr_dmodel). */
inline int PR_MODEL_ILP32 = 1;
inline int PR_MODEL_LP64 = 2;
inline int PR_MODEL_NATIVE = 2;

/* Thread flags (lwpsinfo_t.pr_flag), with illumos's and Oracle's values. */
inline int PR_STOPPED = 0x00000001;	/* the thread is stopped */
inline int PR_ISTOP = 0x00000002;	/* stopped on an event of interest (never set) */
inline int PR_DSTOP = 0x00000004;	/* a stop directive is in effect (never set) */
inline int PR_ISSYS = 0x00001000;	/* a kernel thread (PF_KTHREAD) */
inline int PR_IDLE = 0x10000000;	/* a CPU's idle thread (pid 0) */

/* Synchronization object types (lwpsinfo_t.pr_stype). */
inline char SOBJ_NONE = 0;

/* Linux task state bits (task_struct.__state and exit_state). */
inline unsigned int LINUX_TASK_STOPPED = 0x0004;
inline unsigned int LINUX_TASK_TRACED = 0x0008;
inline unsigned int LINUX_TASK_NEW = 0x0800;
inline unsigned int LINUX_EXIT_ZOMBIE = 0x0020;

/* Linux task flags (task_struct.flags). */
inline unsigned int LINUX_PF_KTHREAD = 0x00200000;

/* Scheduling policies (task_struct.policy). */
inline unsigned int LINUX_SCHED_FIFO = 1;
inline unsigned int LINUX_SCHED_RR = 2;
inline unsigned int LINUX_SCHED_IDLE = 5;
inline unsigned int LINUX_SCHED_DEADLINE = 6;

/* A thread (Linux task), as lwpsinfo_t. */
typedef struct lwpsinfo {
	int pr_flag;		/* PR_STOPPED, PR_ISSYS, PR_IDLE */
	id_t pr_lwpid;		/* thread id (task pid) */
	uintptr_t pr_addr;	/* address of its task_struct */
	uintptr_t pr_wchan;	/* wait address (always 0 here) */
	char pr_stype;		/* synchronization object type (SOBJ_NONE) */
	char pr_state;		/* SSLEEP, SRUN, SZOMB, SSTOP, SIDL, SONPROC */
	char pr_sname;		/* the state as a letter: S R Z T I O */
	char pr_nice;		/* Solaris nice value (not translated) */
	short pr_syscall;	/* system call number (not tracked: 0) */
	char pr_oldpri;		/* Solaris old priority (not translated) */
	char pr_cpu;		/* Solaris CPU usage (not translated) */
	int pr_pri;		/* priority (task_struct.prio: lower runs first) */
	ushort_t pr_pctcpu;	/* % of recent CPU time (not translated) */
	uint64_t pr_start;	/* start time, ns since boot */
	char pr_clname[8];	/* scheduling class: TS, RT, DL, IDLE */
	char pr_name[16];	/* thread name (comm) */
	processorid_t pr_onpro;	/* CPU it runs or last ran on */
	processorid_t pr_bindpro;	/* bound CPU (not tracked: -1) */
} lwpsinfo_t;

/* A process (Linux thread group), as psinfo_t. */
typedef struct psinfo {
	int pr_nlwp;		/* number of threads */
	pid_t pr_pid;		/* process id (tgid) */
	pid_t pr_ppid;		/* parent's process id */
	pid_t pr_pgid;		/* process group id */
	pid_t pr_sid;		/* session id */
	uid_t pr_uid;		/* real user id */
	uid_t pr_euid;		/* effective user id */
	gid_t pr_gid;		/* real group id */
	gid_t pr_egid;		/* effective group id */
	uintptr_t pr_addr;	/* address of its task_struct */
	size_t pr_size;		/* image size in KB (not translated) */
	size_t pr_rssize;	/* resident set size in KB (not translated) */
	ushort_t pr_pctcpu;	/* % of recent CPU time (not translated) */
	ushort_t pr_pctmem;	/* % of memory (not translated) */
	uint64_t pr_start;	/* start time, ns since boot */
	int pr_wstat;		/* exit status (task_struct.exit_code) */
	char pr_fname[16];	/* executable name (comm) */
	char pr_psargs[80];	/* arguments (the current process's; another's comm) */
	char pr_dmodel;		/* PR_MODEL_LP64 (x86_64) */
	int pr_taskid;		/* Solaris task id (0) */
	int pr_projid;		/* Solaris project id (0) */
	int pr_zoneid;		/* Solaris zone id (0) */
	struct tty_struct *pr_ttydev;	/* controlling tty (-1 when none) */
	int pr_argc;		/* argument count (own process: 0 for others) */
	uintptr_t pr_argv;	/* initial argument vector */
	uintptr_t pr_envp;	/* initial environment vector (own process: 0 for others) */
	int pr_nzomb;		/* zombie threads (Linux has none: 0) */
	int pr_poolid;		/* Solaris pool id (0) */
	int pr_contract;	/* Solaris process contract (0) */
} psinfo_t;

translator lwpsinfo_t < struct task_struct *T > {
	pr_flag = ((T->__state & (LINUX_TASK_STOPPED | LINUX_TASK_TRACED)) ? PR_STOPPED : 0) |
	    ((T->flags & LINUX_PF_KTHREAD) ? PR_ISSYS : 0) |
	    (T->pid == 0 ? PR_IDLE : 0);
	pr_lwpid = T->pid;
	pr_addr = (uintptr_t)T;
	pr_wchan = 0;
	pr_stype = SOBJ_NONE;
	pr_state = T->exit_state & LINUX_EXIT_ZOMBIE ? SZOMB :
	    T->on_cpu ? SONPROC :
	    T->__state == 0 ? SRUN :
	    T->__state & (LINUX_TASK_STOPPED | LINUX_TASK_TRACED) ? SSTOP :
	    T->__state & LINUX_TASK_NEW ? SIDL : SSLEEP;
	pr_sname = T->exit_state & LINUX_EXIT_ZOMBIE ? 'Z' :
	    T->on_cpu ? 'O' :
	    T->__state == 0 ? 'R' :
	    T->__state & (LINUX_TASK_STOPPED | LINUX_TASK_TRACED) ? 'T' :
	    T->__state & LINUX_TASK_NEW ? 'I' : 'S';
	pr_syscall = 0;
	pr_pri = T->prio;
	pr_start = T->start_time;
	pr_clname = T->policy == LINUX_SCHED_FIFO || T->policy == LINUX_SCHED_RR ? "RT" :
	    T->policy == LINUX_SCHED_DEADLINE ? "DL" :
	    T->policy == LINUX_SCHED_IDLE ? "IDLE" : "TS";
	pr_name = T->comm;
	pr_onpro = T->thread_info.cpu;
	pr_bindpro = -1;
};

translator psinfo_t < struct task_struct *T > {
	pr_nlwp = T->signal->nr_threads;
	pr_pid = T->tgid;
	pr_ppid = T->real_parent->tgid;
	/* A dead task's last switch (sched:::dequeue) has its pids detached already. */
	pr_pgid = T->signal->pids[PIDTYPE_PGID] != NULL ?
	    T->signal->pids[PIDTYPE_PGID]->numbers[0].nr : 0;
	pr_sid = T->signal->pids[PIDTYPE_SID] != NULL ?
	    T->signal->pids[PIDTYPE_SID]->numbers[0].nr : 0;
	pr_uid = T->cred->uid.val;
	pr_euid = T->cred->euid.val;
	pr_gid = T->cred->gid.val;
	pr_egid = T->cred->egid.val;
	pr_addr = (uintptr_t)T;
	pr_start = T->group_leader->start_time;
	pr_wstat = T->exit_code;
	pr_fname = T->group_leader->comm;
	pr_psargs = T == curthread ? execargs : T->group_leader->comm;
	pr_dmodel = PR_MODEL_LP64;
	pr_taskid = 0;
	pr_projid = 0;
	pr_zoneid = 0;
	pr_ttydev = T->signal->tty != NULL ? T->signal->tty : (struct tty_struct *)-1;
	/*
	 * The initial stack starts with argc, then the argument and environment
	 * vectors; argc is user memory, readable only in the process itself.
	 */
	pr_argc = T == curthread && T->mm != NULL ?
	    *(int *)copyin(T->mm->start_stack, sizeof (int)) : 0;
	pr_argv = T->mm != NULL ? T->mm->start_stack + sizeof (long) : 0;
	pr_envp = T == curthread && T->mm != NULL ? T->mm->start_stack +
	    (*(long *)copyin(T->mm->start_stack, sizeof (long)) + 2) * sizeof (long) : 0;
	pr_nzomb = 0;
	pr_poolid = 0;
	pr_contract = 0;
};

/* The current process's working directory and root directory (DTrace's cwd, root). */
inline string cwd = d_path(&curthread->fs->pwd);
inline string root = d_path(&curthread->fs->root);

/* The current process and thread. */
inline psinfo_t *curpsinfo = xlate <psinfo_t *> (curthread);
inline lwpsinfo_t *curlwpsinfo = xlate <lwpsinfo_t *> (curthread);
