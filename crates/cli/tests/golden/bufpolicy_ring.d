/* flags: -x bufpolicy=ring -x bufsize=24 */
/*
 * bufpolicy=ring keeps only the most recent records that fit in bufsize (bytes of
 * data: 8 for each trace() of an int here, 8 for exit()'s status), shown when tracing
 * ends (Oracle's buffering/tst.ring1).
 */
BEGIN { trace(1); }
BEGIN { trace(2); }
BEGIN { trace(3); }
BEGIN { trace(4); }
BEGIN { trace(5); }
BEGIN { exit(0); }
