/* flags: -q -x bufpolicy=fill -x bufsize=24 */
/*
 * bufpolicy=fill shows records until the buffer is full (bufsize bytes as DTrace counts
 * records: 8 for each printf() of an int here, its 4-byte id and the int); then tracing
 * stops as if exit(0) had been called, and END still runs (Oracle's buffering/tst.fill1).
 */
BEGIN { printf("%d\n", 1); }
BEGIN { printf("%d\n", 2); }
BEGIN { printf("%d\n", 3); }
BEGIN { printf("%d\n", 4); }
BEGIN { printf("%d\n", 5); }
END { printf("end\n"); }
