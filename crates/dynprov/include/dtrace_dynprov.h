/*
 * USDT providers defined at run time: libdtrace_dynprov.so (crates/dynprov).
 * Tracers see the probes like any USDT probe (dtrace -l -p PID, PROVIDER$target:::,
 * PROVIDER*:::, also when created after tracing began).
 */
#ifndef DTRACE_DYNPROV_H
#define DTRACE_DYNPROV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dtrace_dynprov_builder dtrace_dynprov_builder_t;
typedef struct dtrace_dynprov dtrace_dynprov_t;
typedef struct dtrace_dynprov_probe dtrace_dynprov_probe_t;

/* A new provider (letters, digits, _; not ending in a digit); NULL on error. */
dtrace_dynprov_builder_t *dtrace_dynprov_create(const char *name);
/* Add a probe with ntypes C argument types ("int", "char *", ...; at most 10): 0 or -1. */
int dtrace_dynprov_add_probe(dtrace_dynprov_builder_t *b, const char *name,
    const char **types, int ntypes);
/* Load the provider; consumes the builder. NULL on error. */
dtrace_dynprov_t *dtrace_dynprov_enable(dtrace_dynprov_builder_t *b);
/* A probe of a loaded provider, NULL if none; valid until the provider is destroyed. */
const dtrace_dynprov_probe_t *dtrace_dynprov_probe(const dtrace_dynprov_t *p, const char *name);
/* Whether a tracer has the probe enabled. */
int dtrace_dynprov_is_enabled(const dtrace_dynprov_probe_t *probe);
/* Fire the probe with nargs 64-bit arguments (a string as its address). */
void dtrace_dynprov_fire(const dtrace_dynprov_probe_t *probe, const uint64_t *args, int nargs);
/* Unload the provider and its probes. */
void dtrace_dynprov_destroy(dtrace_dynprov_t *p);
/* Why the last call on this thread failed. */
const char *dtrace_dynprov_error(void);

#ifdef __cplusplus
}
#endif

#endif
