/*
 * uregs[]: the user-mode registers of the thread that fires the probe (BEGIN fires in
 * dtrace itself, a 64-bit process: user code and stack segments 0x33 and 0x2b), and the
 * indexes past struct pt_regs, which read the task's thread state.
 */
BEGIN
{
	printf("cs %x ss %x\n", uregs[R_CS], uregs[R_SS]);
	printf("pc %s\n", uregs[R_PC] != 0 && uregs[R_PC] == uregs[R_EIP] ? "set" : "unset");
	printf("fs %s\n", uregs[R_FS] == curthread->thread.fsbase ? "thread" : "other");
	printf("%d %d %d\n", R_PC, R_SP, R_TRAPNO);
	exit(0);
}
