/* flags: -x bufpolicy=ring -x bufsize=24 */
/*
 * bufpolicy=ring keeps only the most recent records that fit in bufsize (bytes as DTrace
 * counts records: 8 for each trace() of an int here, its 4-byte id and the int, and 8 for
 * exit()'s), shown when tracing
 * ends (Oracle's buffering/tst.ring1).
 */
BEGIN { trace(1); }
BEGIN { trace(2); }
BEGIN { trace(3); }
BEGIN { trace(4); }
BEGIN { trace(5); }
BEGIN { exit(0); }
