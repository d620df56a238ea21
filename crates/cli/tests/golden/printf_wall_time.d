/* %Y and %T print nanoseconds since the epoch as local time (the golden tests run with
   TZ=US/Pacific): %Y as DTrace's "year month day time", %T as RFC 822 with DTrace's ISO
   week-based year (1969-12-31 is in 1970's first week). */
#pragma D option quiet

inline uint64_t NANOSEC = 1000000000;

BEGIN
{
	printf("%Y\n%Y\n%Y\n", (uint64_t)0, (uint64_t)1062609821 * NANOSEC,
	    (uint64_t)0x7fffffff * NANOSEC);
	printf("%T\n%T\n", (uint64_t)0, (uint64_t)1062609821 * NANOSEC);
	printf("[%-22Y]\n", (uint64_t)1062609821 * NANOSEC);
	exit(0);
}
