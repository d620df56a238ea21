/*
 * signal.d -- signal numbers and SIGCHLD codes, for Linux on x86_64.
 *
 * Part of dtrace's built-in D library (see procfs.d).  The proc provider's exit probe
 * gives its reason as one of the CLD_* codes; signal-send, signal-handle and
 * signal-clear give signal numbers, which these names spell.
 */

#pragma D depends_on provider proc

/* Why a child changed state (siginfo si_code for SIGCHLD): proc:::exit args[0]. */
inline int CLD_EXITED = 1;	/* exited normally */
inline int CLD_KILLED = 2;	/* killed by a signal */
inline int CLD_DUMPED = 3;	/* killed by a signal, and dumped core */
inline int CLD_TRAPPED = 4;	/* traced child has trapped */
inline int CLD_STOPPED = 5;	/* child has stopped */
inline int CLD_CONTINUED = 6;	/* stopped child has continued */

/* Signal numbers. */
inline int SIGHUP = 1;
inline int SIGINT = 2;
inline int SIGQUIT = 3;
inline int SIGILL = 4;
inline int SIGTRAP = 5;
inline int SIGABRT = 6;
inline int SIGIOT = 6;
inline int SIGBUS = 7;
inline int SIGFPE = 8;
inline int SIGKILL = 9;
inline int SIGUSR1 = 10;
inline int SIGSEGV = 11;
inline int SIGUSR2 = 12;
inline int SIGPIPE = 13;
inline int SIGALRM = 14;
inline int SIGTERM = 15;
inline int SIGSTKFLT = 16;
inline int SIGCHLD = 17;
inline int SIGCLD = 17;
inline int SIGCONT = 18;
inline int SIGSTOP = 19;
inline int SIGTSTP = 20;
inline int SIGTTIN = 21;
inline int SIGTTOU = 22;
inline int SIGURG = 23;
inline int SIGXCPU = 24;
inline int SIGXFSZ = 25;
inline int SIGVTALRM = 26;
inline int SIGPROF = 27;
inline int SIGWINCH = 28;
inline int SIGIO = 29;
inline int SIGPOLL = 29;
inline int SIGPWR = 30;
inline int SIGSYS = 31;
inline int SIGRTMIN = 32;
inline int SIGRTMAX = 64;
