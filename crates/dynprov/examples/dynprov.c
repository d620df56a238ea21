/*
 * A C program defining a provider at run time with libdtrace_dynprov:
 * `dynprov PROVIDER COUNT` creates PROVIDER with probe `tick(int i, char *label)`, fires it
 * COUNT times while it is enabled, destroys the provider, and prints how many fired.
 * `dynprov PROVIDER COUNT bench` also fires a static USDT probe (sys/sdt.h) `PROVIDER`-less
 * `dynbench:::tick` COUNT times and prints the ns per fire of each: run it under a tracer
 * enabling both (bench/dynprov_fire.py).
 *
 * Build: gcc -O2 -Icrates/dynprov/include dynprov.c -Ltarget/release -ldtrace_dynprov
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/sdt.h>
#include "dtrace_dynprov.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "dync";
	long count = argc > 2 ? atol(argv[2]) : 3;
	int bench = argc > 3 && strcmp(argv[3], "bench") == 0;
	dtrace_dynprov_builder_t *b = dtrace_dynprov_create(name);
	const char *types[] = { "int", "char *" };
	if (!b || dtrace_dynprov_add_probe(b, "tick", types, 2) != 0) {
		fprintf(stderr, "define: %s\n", dtrace_dynprov_error());
		return 1;
	}
	dtrace_dynprov_t *p = dtrace_dynprov_enable(b);
	if (!p) {
		fprintf(stderr, "enable: %s\n", dtrace_dynprov_error());
		return 1;
	}
	const dtrace_dynprov_probe_t *tick = dtrace_dynprov_probe(p, "tick");
	long fired = 0;
	double t0 = now_ns();
	for (long i = 0; i < count; i++) {
		if (dtrace_dynprov_is_enabled(tick)) {
			uint64_t args[] = { (uint64_t)i, (uint64_t)(uintptr_t)"label" };
			dtrace_dynprov_fire(tick, args, 2);
			fired++;
		}
	}
	double dynamic_ns = (now_ns() - t0) / count;
	if (bench) {
		t0 = now_ns();
		for (long i = 0; i < count; i++)
			DTRACE_PROBE2(dynbench, tick, i, "label");
		double static_ns = (now_ns() - t0) / count;
		printf("dynamic %.1f ns/fire, static %.1f ns/fire\n", dynamic_ns, static_ns);
	}
	dtrace_dynprov_destroy(p);
	printf("fired %ld\n", fired);
	return 0;
}
