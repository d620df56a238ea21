/* The probes of the example program, as a C program would give them to dtrace -h. */
provider myapp {
	probe start(int id, char *name);
	probe item__done(int id, uint64_t bytes) : (uint64_t bytes, int id);
	probe stop();
};
