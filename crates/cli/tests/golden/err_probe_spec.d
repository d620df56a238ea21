/* flags: -q -n 'BEGIN{Printf("FOUND");}' */
/*
 * An error in a -n program: no line number (after an Oracle DTrace test's
 * expected stderr).  The case runs the -n program, not this file.
 */
