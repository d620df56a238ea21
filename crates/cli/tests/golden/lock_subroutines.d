/*
 * The lock subroutines read Linux's lock words as Oracle's Linux DTrace does: a struct
 * mutex's owner word (the task pointer, its three low bits flags) and an rwlock_t's
 * counter (readers above bit 9, the waiting-writer bit 8, the writer-locked byte).
 * Lock words are written into alloca() memory here, so the answers are known.
 */
BEGIN
{
	m = (struct mutex *)alloca(sizeof (struct mutex));
	*(uint64_t *)m = (uint64_t)curthread | 1;
	printf("mine %d %d %d\n", mutex_owned(m), mutex_owner(m) == curthread,
	    mutex_owner(m)->pid == pid);
	*(uint64_t *)m = 0x1000 | 4;
	printf("other %d %x\n", mutex_owned(m), (uint64_t)mutex_owner(m));
	*(uint64_t *)m = 0;
	printf("free %d %d\n", mutex_owned(m), mutex_owner(m) == NULL);
	printf("types %d %d\n", mutex_type_adaptive(m), mutex_type_spin(m));

	r = (rwlock_t *)alloca(sizeof (rwlock_t));
	*(uint32_t *)r = 3 << 9;
	printf("readers %d %d %d\n", rw_read_held(r), rw_write_held(r), rw_iswriter(r));
	*(uint32_t *)r = 0xff;
	printf("writer %d %d %d\n", rw_read_held(r), rw_write_held(r), rw_iswriter(r));
	*(uint32_t *)r = (1 << 9) | 0x100;
	printf("waiting %d %d %d\n", rw_read_held(r), rw_write_held(r), rw_iswriter(r));
	exit(0);
}
