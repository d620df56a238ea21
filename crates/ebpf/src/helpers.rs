//! Kernel helper function numbers (`enum bpf_func_id`) used by generated code.

pub const MAP_LOOKUP_ELEM: i32 = 1;
pub const MAP_UPDATE_ELEM: i32 = 2;
pub const MAP_DELETE_ELEM: i32 = 3;
pub const PROBE_READ: i32 = 4;
pub const KTIME_GET_NS: i32 = 5;
pub const GET_PRANDOM_U32: i32 = 7;
pub const GET_SMP_PROCESSOR_ID: i32 = 8;
pub const TAIL_CALL: i32 = 12;
pub const GET_CURRENT_PID_TGID: i32 = 14;
pub const GET_CURRENT_UID_GID: i32 = 15;
pub const GET_CURRENT_COMM: i32 = 16;
pub const PERF_EVENT_OUTPUT: i32 = 25;
pub const GET_STACKID: i32 = 27;
pub const GET_CURRENT_TASK: i32 = 35;
pub const PROBE_WRITE_USER: i32 = 36;
pub const PROBE_READ_STR: i32 = 45;
pub const SEND_SIGNAL: i32 = 109;
pub const PROBE_READ_USER: i32 = 112;
pub const PROBE_READ_KERNEL: i32 = 113;
pub const PROBE_READ_USER_STR: i32 = 114;
pub const PROBE_READ_KERNEL_STR: i32 = 115;
pub const RINGBUF_OUTPUT: i32 = 130;
pub const RINGBUF_QUERY: i32 = 134;
/// `bpf_copy_from_user`: sleepable programs only (it may fault the page in).
pub const COPY_FROM_USER: i32 = 148;
/// `bpf_task_storage_get(map, task, value, flags)`: the task's value in a task local
/// storage map (created first with [`BPF_LOCAL_STORAGE_GET_F_CREATE`]), or NULL.
pub const TASK_STORAGE_GET: i32 = 156;
pub const GET_CURRENT_TASK_BTF: i32 = 158;
/// `bpf_this_cpu_ptr`: this CPU's instance of a per-CPU kernel variable.
pub const THIS_CPU_PTR: i32 = 154;
/// `bpf_get_attach_cookie(ctx)`: the cookie the probe's link attached this site with.
pub const GET_ATTACH_COOKIE: i32 = 174;
pub const TASK_PT_REGS: i32 = 175;
pub const KTIME_GET_BOOT_NS: i32 = 125;
pub const GET_STACK: i32 = 67;
pub const JIFFIES64: i32 = 118;
pub const LOOP: i32 = 181;
pub const STRNCMP: i32 = 182;
pub const KTIME_GET_TAI_NS: i32 = 208;

/// `bpf_ringbuf_output`'s flags: do not wake the reader, or wake it whatever it is doing
/// (by default the kernel wakes a reader that has read everything before the record).
pub const BPF_RB_NO_WAKEUP: i32 = 1;
pub const BPF_RB_FORCE_WAKEUP: i32 = 2;
/// `bpf_task_storage_get`'s flag: create the task's value (zeroed) if it has none.
pub const BPF_LOCAL_STORAGE_GET_F_CREATE: i32 = 1;
/// `bpf_ringbuf_query`'s question: the bytes written and not yet consumed.
pub const BPF_RB_AVAIL_DATA: i32 = 0;

/// The helper's name (its kernel name without `bpf_`), for the disassembler.
pub fn name(id: i32) -> Option<&'static str> {
    Some(match id {
        MAP_LOOKUP_ELEM => "map_lookup_elem",
        PROBE_WRITE_USER => "probe_write_user",
        MAP_UPDATE_ELEM => "map_update_elem",
        MAP_DELETE_ELEM => "map_delete_elem",
        PROBE_READ => "probe_read",
        KTIME_GET_NS => "ktime_get_ns",
        GET_PRANDOM_U32 => "get_prandom_u32",
        GET_SMP_PROCESSOR_ID => "get_smp_processor_id",
        TAIL_CALL => "tail_call",
        GET_CURRENT_PID_TGID => "get_current_pid_tgid",
        GET_CURRENT_UID_GID => "get_current_uid_gid",
        GET_CURRENT_COMM => "get_current_comm",
        PERF_EVENT_OUTPUT => "perf_event_output",
        GET_STACKID => "get_stackid",
        GET_CURRENT_TASK => "get_current_task",
        PROBE_READ_STR => "probe_read_str",
        SEND_SIGNAL => "send_signal",
        PROBE_READ_USER => "probe_read_user",
        PROBE_READ_KERNEL => "probe_read_kernel",
        PROBE_READ_USER_STR => "probe_read_user_str",
        PROBE_READ_KERNEL_STR => "probe_read_kernel_str",
        RINGBUF_OUTPUT => "ringbuf_output",
        RINGBUF_QUERY => "ringbuf_query",
        COPY_FROM_USER => "copy_from_user",
        TASK_STORAGE_GET => "task_storage_get",
        GET_CURRENT_TASK_BTF => "get_current_task_btf",
        THIS_CPU_PTR => "this_cpu_ptr",
        GET_ATTACH_COOKIE => "get_attach_cookie",
        TASK_PT_REGS => "task_pt_regs",
        KTIME_GET_BOOT_NS => "ktime_get_boot_ns",
        GET_STACK => "get_stack",
        JIFFIES64 => "jiffies64",
        LOOP => "loop",
        STRNCMP => "strncmp",
        KTIME_GET_TAI_NS => "ktime_get_tai_ns",
        _ => return None,
    })
}
