//! The compiler's stack. Parsing, typing and code generation recurse over the syntax tree,
//! so a long operator chain (`1 + 1 + ... + 1` of 10,000 terms, `curthread->real_parent->...`
//! 10,000 deep) needs far more stack than the main thread's 8 MiB. They run on a thread of
//! their own with [`STACK_SIZE`] bytes of stack: address space reserved up front, memory
//! touched only as deep as a program goes. The parser refuses expressions deeper than
//! `dtrace_frontend::MAX_EXPR_HEIGHT` levels with a D error, so no program gets deeper
//! than this stack holds.

/// The compiler thread's stack, in bytes. Measured in an unoptimised build, the deepest-
/// recursing chains take about 12 KiB per level (`->` chains; `+` about 8 KiB), so
/// `MAX_EXPR_HEIGHT` (20,000) levels need up to 240 MiB: this leaves twice that.
pub const STACK_SIZE: usize = 512 << 20;

/// Run `f` on a thread with [`STACK_SIZE`] bytes of stack, and `beside` on the caller's
/// thread meanwhile; what both return. A panic in `f` goes on in the caller. Where no such
/// thread can be started (address space limits), `f` runs on the caller's thread, then
/// `beside` (which may wait for what `f` sends it): ordinary programs need no more.
pub fn run_beside<T: Send, U>(f: impl FnOnce() -> T + Send, beside: impl FnOnce() -> U) -> (T, U) {
    let job = std::sync::Mutex::new(Some(f));
    let take = || job.lock().ok().and_then(|mut f| f.take());
    let mut beside = Some(beside);
    let on_thread = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("dtrace-compile".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || take().map(|f| f()))
            .ok()?;
        let beside = beside.take().expect("run once")();
        let result = thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Some((result.expect("the thread took the job"), beside))
    });
    on_thread.unwrap_or_else(|| {
        let result = take().expect("the compiler ran on neither thread")();
        (result, beside.take().expect("run once")())
    })
}
