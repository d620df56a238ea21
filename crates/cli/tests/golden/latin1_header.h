/* A header written in Latin-1: café. */
#define GREETING "café"
