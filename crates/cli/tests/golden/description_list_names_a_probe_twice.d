/* A clause whose descriptions name one probe twice runs twice for each firing: each
   description is a statement of its own, as in DTrace. */
#pragma D option quiet

BEGIN, dtrace:::BEGIN
{
	n++;
	printf("run %d\n", n);
}

BEGIN
{
	exit(0);
}
