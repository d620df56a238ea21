/* Type names scoped by module: D`name for the program's own typedefs, vmlinux`name for the
   kernel's, in casts and sizeof as anywhere else. */
#pragma D option quiet

typedef struct pair {
	int a;
	int b;
} pair_t;

BEGIN
{
	p = (D`pair_t *)alloca(sizeof(D`pair_t));
	p->a = 3;
	p->b = 4;
	x = (vmlinux`pid_t)-1;
	printf("%d %d %d %d\n", p->a + p->b, sizeof(D`pair_t), sizeof(vmlinux`pid_t), x);
	exit(0);
}
