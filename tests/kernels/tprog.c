/* The traced program of the kernel matrix (tests/kernels/run.py), built static on the host.
 *
 *   tprog N [fork]
 *
 * calls work(i) for i = 0..N-1, each firing the USDT probe demo:tick with i, then the ten
 * functions fn0..fn9 once each; with "fork", a child first does the same with i = 100..,
 * and the parent waits for it; with "exec", the child execs "tprog N" instead; with "threads",
 * four threads first each read(2) 10 + t bytes from a pipe of their own, all blocked at once
 * until the main thread writes t + 1 bytes to each, last thread first. Writes one line per
 * call of work() so syscall probes fire.
 * First of all it fires demo:file with a string the program never touches itself, in a
 * 64 KiB-aligned section of its own (so no page of it is mapped when the probe fires); with
 * "open", it then opens (openat(2)) a path in another such section, /etc/hostname. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int work(int i)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "work %d\n", i);
	DTRACE_PROBE1(demo, tick, i);
	return (int)write(1, line, (size_t)n);
}

#define FN(k) __attribute__((noinline)) int fn##k(int x) { __asm__ volatile("" ::: "memory"); return x + k; }
FN(0) FN(1) FN(2) FN(3) FN(4) FN(5) FN(6) FN(7) FN(8) FN(9)

static void run(int first, int n)
{
	int (*fns[])(int) = {fn0, fn1, fn2, fn3, fn4, fn5, fn6, fn7, fn8, fn9};
	for (int i = 0; i < n; i++)
		work(first + i);
	for (int k = 0; k < 10; k++)
		fns[k](k);
}

static int pipes[4][2];

static void *reader(void *arg)
{
	long t = (long)arg;
	char buf[16];
	return (void *)(long)read(pipes[t][0], buf, 10 + (size_t)t);
}

/* Four reads in flight in four threads at once, each returning t + 1 of its 10 + t bytes. */
static void threads(void)
{
	pthread_t th[4];
	for (long t = 0; t < 4; t++) {
		if (pipe(pipes[t]) != 0 || pthread_create(&th[t], NULL, reader, (void *)t) != 0)
			exit(2);
	}
	usleep(300000);
	for (int t = 3; t >= 0; t--) {
		if (write(pipes[t][1], "xxxx", (size_t)t + 1) != t + 1)
			exit(2);
	}
	for (int t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
}

__attribute__((section(".untouched"), aligned(65536))) static const char untouched[65536] = "untouched.h";

__attribute__((section(".untouched_path"), aligned(65536))) static const char untouched_path[65536] = "/etc/hostname";

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	DTRACE_PROBE1(demo, file, untouched);
	if (argc > 2 && strcmp(argv[2], "open") == 0) {
		int fd = open(untouched_path, O_RDONLY);
		if (fd >= 0)
			close(fd);
	} else if (argc > 2 && strcmp(argv[2], "threads") == 0) {
		threads();
	} else if (argc > 2) {
		pid_t child = fork();
		if (child == 0) {
			if (strcmp(argv[2], "exec") == 0)
				execl(argv[0], argv[0], argv[1], (char *)NULL);
			run(100, n);
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
	run(0, n);
	return 0;
}
