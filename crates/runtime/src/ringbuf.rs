//! The consumer side of a `BPF_MAP_TYPE_RINGBUF` map: the shared-memory protocol and waiting.
//!
//! Layout (kernel/bpf/ringbuf.c): page 0 holds `consumer_pos` (mapped read-write), page 1
//! `producer_pos`, and the data area follows, mapped twice in a row so that a record that
//! wraps around the end can still be read as one slice. Each record starts with an 8-byte
//! header `{ u32 len; u32 pg_off }` whose `len` carries the BUSY and DISCARD bits; records
//! are padded to 8 bytes.
//!
//! A reader may [`RingBuf::retain`] the newest records it read: it then moves the kernel's
//! `consumer_pos` only to the oldest of them, so that the map itself still holds them (for a
//! ring pinned to outlive `dtrace`) while the rest of the buffer stays free for the programs.

use std::collections::VecDeque;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::map::{Map, MapType};

const BUSY_BIT: u32 = 1 << 31;
const DISCARD_BIT: u32 = 1 << 30;
const HEADER_SIZE: usize = 8;

/// One `mmap`ed region, unmapped on drop.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn new(fd: &OwnedFd, len: usize, prot: i32, offset: usize) -> Result<Mapping> {
        // SAFETY: we ask the kernel for a fresh shared mapping of the map's fd; no existing
        // memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(Error::last_os(format!(
                "mmap of ring buffer ({len} bytes at offset {offset})"
            )));
        }
        NonNull::new(ptr.cast())
            .map(|ptr| Mapping { ptr, len })
            .ok_or_else(|| Error::Invalid("mmap returned NULL".into()))
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned, and nothing borrows them any more
        // (slices handed to callbacks do not outlive `consume`).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// A reader of one ring buffer map.
pub struct RingBuf {
    /// A duplicate of the map's fd, so the buffer outlives the [`Map`] it came from.
    _map_fd: OwnedFd,
    epoll: OwnedFd,
    /// The consumer page (read-write).
    consumer: Mapping,
    /// The producer page followed by the data area twice (read-only).
    producer: Mapping,
    /// Data area size minus one (the size is a power of two).
    mask: usize,
    page: usize,
    /// Where the next record to read starts (`consumer_pos` unless records are retained).
    read_pos: u64,
    /// Bytes of the newest records read that stay in the map.
    retain: u64,
    /// Where each retained record starts, oldest first.
    retained: VecDeque<u64>,
    /// Look for records this often instead of waiting for the kernel's wakeups.
    poll: Option<Duration>,
}

// SAFETY: the mappings are plain shared memory accessed through atomics and `&mut self`;
// nothing in RingBuf is tied to the creating thread.
unsafe impl Send for RingBuf {}

impl RingBuf {
    /// Maps `map`, which must be a [`MapType::RingBuf`].
    pub fn new(map: &Map) -> Result<RingBuf> {
        let spec = map.spec();
        if spec.map_type != MapType::RingBuf {
            return Err(Error::Invalid(format!(
                "map {:?} is a {:?}, not a ring buffer",
                spec.name, spec.map_type
            )));
        }
        let size = spec.max_entries as usize;
        let fd = map
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Error::io("dup of ring buffer fd", &e))?;
        // SAFETY: sysconf has no memory-safety preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let consumer = Mapping::new(&fd, page, libc::PROT_READ | libc::PROT_WRITE, 0)?;
        let producer = Mapping::new(&fd, page + 2 * size, libc::PROT_READ, page)?;
        let epoll = epoll_on(&fd)?;
        let mut rb = RingBuf {
            _map_fd: fd,
            epoll,
            consumer,
            producer,
            mask: size - 1,
            page,
            read_pos: 0,
            retain: 0,
            retained: VecDeque::new(),
            poll: None,
        };
        rb.read_pos = rb.consumer_pos().load(Ordering::Acquire);
        Ok(rb)
    }

    /// Keep the newest records read, up to `bytes` of the buffer (headers and padding
    /// included), in the map: the kernel's `consumer_pos` stays at the oldest of them.
    /// [`RingBuf::wait`] then polls every `poll`: the kernel wakes a reader only when it
    /// has caught up, and epoll says there is data as long as any is retained.
    pub fn retain(&mut self, bytes: usize, poll: Duration) {
        self.retain = bytes as u64;
        self.poll = Some(poll);
    }

    /// Make [`RingBuf::wait`] look for records every `every` instead of waiting for the
    /// kernel's wakeups, which cost the writing CPU an interrupt and a context switch for
    /// nearly every record of a reader that keeps up: for a reader that need not see each
    /// record at once.
    pub fn poll(&mut self, every: Duration) {
        self.poll = Some(every);
    }

    /// Records up to `read` were read: free what is not retained.
    fn release(&mut self, read: u64) {
        self.read_pos = read;
        while let Some(&oldest) = self.retained.front() {
            if read - oldest <= self.retain {
                break;
            }
            self.retained.pop_front();
        }
        let to = self.retained.front().copied().unwrap_or(read);
        self.consumer_pos().store(to, Ordering::Release);
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the consumer page starts with the kernel's 8-byte-aligned `unsigned long
        // consumer_pos`, which lives as long as the mapping (i.e. self).
        unsafe { &*self.consumer.ptr.as_ptr().cast::<AtomicU64>() }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: as for consumer_pos, at the start of the producer page.
        unsafe { &*self.producer.ptr.as_ptr().cast::<AtomicU64>() }
    }

    /// The record header's `len` word at data offset `off` (8-aligned, < data size).
    fn header(&self, off: usize) -> &AtomicU32 {
        // SAFETY: off + 8 lies within the first copy of the data area, and record headers
        // are 8-byte aligned; the kernel updates this word atomically.
        unsafe {
            &*self
                .producer
                .ptr
                .as_ptr()
                .add(self.page + off)
                .cast::<AtomicU32>()
        }
    }

    /// Hands every committed record to `f` in order, skipping discarded ones, and frees
    /// their space. Stops at the first record still being written. Returns how many
    /// records `f` saw.
    pub fn consume(&mut self, mut f: impl FnMut(&[u8])) -> usize {
        let mut count = 0;
        let mut cons = self.read_pos;
        loop {
            let prod = self.producer_pos().load(Ordering::Acquire);
            let before = cons;
            while cons < prod {
                let off = cons as usize & self.mask;
                let word = self.header(off).load(Ordering::Acquire);
                if word & BUSY_BIT != 0 {
                    return count;
                }
                let len = (word & !(BUSY_BIT | DISCARD_BIT)) as usize;
                if word & DISCARD_BIT == 0 && len <= self.mask + 1 {
                    // SAFETY: the record body (len bytes after the header) lies within the
                    // doubly mapped data area even when it wraps, and the kernel will not
                    // touch it until we advance consumer_pos past it below.
                    let body = unsafe {
                        std::slice::from_raw_parts(
                            self.producer
                                .ptr
                                .as_ptr()
                                .add(self.page + off + HEADER_SIZE),
                            len,
                        )
                    };
                    f(body);
                    count += 1;
                    if self.retain > 0 {
                        self.retained.push_back(cons);
                    }
                }
                cons += (HEADER_SIZE + len).next_multiple_of(8) as u64;
                self.release(cons);
            }
            if cons == before {
                return count;
            }
        }
    }

    /// Waits until the kernel signals new data or `timeout` passes; true if woken by data.
    /// An interrupted wait (EINTR) returns false.
    pub fn wait(&self, timeout: Duration) -> Result<bool> {
        if let Some(every) = self.poll {
            std::thread::sleep(timeout.min(every));
            return Ok(self.producer_pos().load(Ordering::Acquire) > self.read_pos);
        }
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: we pass one writable epoll_event and say so.
        let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), &mut event, 1, ms) };
        if n < 0 {
            let err = Error::last_os("epoll_wait on ring buffer");
            return if err.errno() == Some(libc::EINTR) {
                Ok(false)
            } else {
                Err(err)
            };
        }
        Ok(n > 0)
    }
}

/// An epoll instance watching `fd` for input.
fn epoll_on(fd: &OwnedFd) -> Result<OwnedFd> {
    // SAFETY: epoll_create1 takes no pointers.
    let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if raw < 0 {
        return Err(Error::last_os("epoll_create1"));
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    let epoll = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut event = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: 0,
    };
    // SAFETY: both fds are open and event is a valid epoll_event the kernel only reads.
    if unsafe { libc::epoll_ctl(raw, libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut event) } < 0 {
        return Err(Error::last_os("epoll_ctl on ring buffer"));
    }
    Ok(epoll)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, load};
    use crate::{ProgramType, Update};
    use dtrace_ebpf::{
        helpers, Insn, Size, BPF_ADD, BPF_JNE, BPF_PSEUDO_MAP_FD, R0, R1, R10, R2, R3, R4, R6, R7,
    };

    const RINGBUF_RESERVE: i32 = 131;
    const RINGBUF_DISCARD: i32 = 133;

    /// `bpf_ringbuf_output(rb, r10 + off, len, 0)`, leaving the helper's result in r0.
    fn output(rb: &Map, off: i32, len: i32) -> Vec<Insn> {
        let mut v = Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, rb.fd(), 0).to_vec();
        v.extend([
            Insn::mov64_reg(R2, R10),
            Insn::alu64_imm(BPF_ADD, R2, off),
            Insn::mov64_imm(R3, len),
            Insn::mov64_imm(R4, 0),
            Insn::call(helpers::RINGBUF_OUTPUT),
        ]);
        v
    }

    /// A program writing a `len`-byte record: the u64 context arg 0, then bytes 8, 9, 10, ...
    fn record_prog(rb: &Map, len: usize) -> crate::Program {
        let mut insns = vec![Insn::ldx(Size::DW, R7, R1, 0)];
        let base = -(len as i16);
        insns.push(Insn::stx(Size::DW, R10, base, R7));
        for i in 8..len {
            insns.push(Insn::st(Size::B, R10, base + i as i16, i as u8 as i32));
        }
        insns.extend(output(rb, base as i32, len as i32));
        insns.push(Insn::exit());
        load(ProgramType::RawTracepoint, &insns)
    }

    fn expected_record(seq: u64, len: usize) -> Vec<u8> {
        let mut v = seq.to_ne_bytes().to_vec();
        v.extend((8..len).map(|i| i as u8));
        v
    }

    fn consume_all(rb: &mut RingBuf) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let n = rb.consume(|r| out.push(r.to_vec()));
        assert_eq!(n, out.len());
        out
    }

    #[test]
    fn reads_back_the_exact_bytes() {
        let map = testutil::ringbuf(4096);
        let mut rb = RingBuf::new(&map).unwrap();
        let mut insns = vec![
            Insn::st(Size::W, R10, -16, 0x0403_0201),
            Insn::st(Size::W, R10, -12, 0x0807_0605),
            Insn::st(Size::W, R10, -8, 0x0c0b_0a09),
        ];
        insns.extend(output(&map, -16, 12));
        insns.push(Insn::exit());
        let prog = load(ProgramType::RawTracepoint, &insns);
        assert!(!rb.wait(Duration::ZERO).unwrap());
        assert_eq!(prog.test_run(&[]).unwrap(), 0);
        assert!(rb.wait(Duration::ZERO).unwrap());
        let records = consume_all(&mut rb);
        assert_eq!(records, vec![(1..=12).collect::<Vec<u8>>()]);
        assert!(consume_all(&mut rb).is_empty());
        assert!(!rb.wait(Duration::from_millis(10)).unwrap());
    }

    #[test]
    fn wraps_around_and_skips_discarded_records() {
        let map = testutil::ringbuf(4096);
        let mut rb = RingBuf::new(&map).unwrap();
        let big = record_prog(&map, 400);
        let mut insns = Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, map.fd(), 0).to_vec();
        insns.extend([
            Insn::mov64_imm(R2, 16),
            Insn::mov64_imm(R3, 0),
            Insn::call(RINGBUF_RESERVE),
            Insn::jmp_imm(BPF_JNE, R0, 0, 2),
            Insn::mov64_imm(R0, 1),
            Insn::exit(),
            Insn::mov64_reg(R1, R0),
            Insn::mov64_imm(R2, 0),
            Insn::call(RINGBUF_DISCARD),
            Insn::mov64_imm(R0, 0),
            Insn::exit(),
        ]);
        let discard = load(ProgramType::RawTracepoint, &insns);
        // 40 records of 408 bytes plus 14 discarded 24-byte ones: four trips round 4 KiB,
        // with records straddling the end of the data area.
        let mut want = Vec::new();
        let mut got = Vec::new();
        for seq in 0..40u64 {
            if seq % 3 == 0 {
                assert_eq!(discard.test_run(&[]).unwrap(), 0);
            }
            assert_eq!(big.test_run(&seq.to_ne_bytes()).unwrap(), 0);
            want.push(expected_record(seq, 400));
            if seq % 2 == 1 {
                got.extend(consume_all(&mut rb));
            }
        }
        assert_eq!(got.len(), want.len());
        assert!(got == want, "records differ");
    }

    #[test]
    fn a_full_buffer_refuses_output_until_consumed() {
        let map = testutil::ringbuf(4096);
        let mut rb = RingBuf::new(&map).unwrap();
        let prog = record_prog(&map, 400);
        // Ten 408-byte records fit in 4096 bytes; the eleventh does not.
        for seq in 0..10u64 {
            assert_eq!(prog.test_run(&seq.to_ne_bytes()).unwrap(), 0);
        }
        let eagain = -libc::EAGAIN as u32;
        assert_eq!(prog.test_run(&10u64.to_ne_bytes()).unwrap(), eagain);
        let got = consume_all(&mut rb);
        assert_eq!(got.len(), 10);
        assert_eq!(got[9], expected_record(9, 400));
        assert_eq!(prog.test_run(&11u64.to_ne_bytes()).unwrap(), 0);
        assert_eq!(consume_all(&mut rb), vec![expected_record(11, 400)]);
    }

    #[test]
    fn retained_records_stay_in_the_map_for_another_reader() {
        let map = testutil::ringbuf(4096);
        let mut rb = RingBuf::new(&map).unwrap();
        // Two 408-byte records (416 with header and padding) are retained, no more.
        rb.retain(2 * 416, Duration::from_millis(1));
        let prog = record_prog(&map, 400);
        for seq in 0..5u64 {
            assert_eq!(prog.test_run(&seq.to_ne_bytes()).unwrap(), 0);
        }
        assert_eq!(consume_all(&mut rb).len(), 5);
        assert!(consume_all(&mut rb).is_empty(), "read twice");
        assert!(!rb.wait(Duration::from_millis(1)).unwrap());
        // Room is left for the programs: eight more records fit beside the two retained.
        for seq in 5..13u64 {
            assert_eq!(prog.test_run(&seq.to_ne_bytes()).unwrap(), 0);
        }
        assert_eq!(consume_all(&mut rb).len(), 8);
        let mut other = RingBuf::new(&map).unwrap();
        assert_eq!(
            consume_all(&mut other),
            vec![expected_record(11, 400), expected_record(12, 400)]
        );
    }

    #[test]
    fn wait_wakes_when_another_thread_writes() {
        let map = testutil::ringbuf(4096);
        let rb = RingBuf::new(&map).unwrap();
        let prog = record_prog(&map, 16);
        let start = std::time::Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                prog.test_run(&7u64.to_ne_bytes()).unwrap();
            });
            assert!(rb.wait(Duration::from_secs(10)).unwrap());
        });
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn outlives_its_map_and_rejects_other_maps() {
        let map = testutil::ringbuf(4096);
        let prog = record_prog(&map, 16);
        let mut rb = RingBuf::new(&map).unwrap();
        drop(map);
        prog.test_run(&3u64.to_ne_bytes()).unwrap();
        assert_eq!(consume_all(&mut rb), vec![expected_record(3, 16)]);
        let array = testutil::map(MapType::Array, 8, 1);
        assert!(matches!(RingBuf::new(&array), Err(Error::Invalid(_))));
    }

    /// What a BEGIN probe does: a raw tracepoint program, test-run, using the helpers
    /// D needs for `arg0`, `timestamp`, `pid`/`tid`, `cpu`, `execname` and globals.
    #[test]
    fn begin_style_test_run_uses_the_helpers() {
        let rbmap = testutil::ringbuf(4096);
        let globals = testutil::map(MapType::Array, 8, 1);
        globals
            .update(
                &0u32.to_ne_bytes(),
                &0xdead_beef_cafeu64.to_ne_bytes(),
                Update::Any,
            )
            .unwrap();
        // Record at r10-64: arg0, ktime, pid_tgid, cpu, comm[16], global.
        let mut insns = vec![
            Insn::mov64_reg(R6, R1),
            Insn::ldx(Size::DW, R7, R6, 0),
            Insn::stx(Size::DW, R10, -64, R7),
            Insn::call(helpers::KTIME_GET_NS),
            Insn::stx(Size::DW, R10, -56, R0),
            Insn::call(helpers::GET_CURRENT_PID_TGID),
            Insn::stx(Size::DW, R10, -48, R0),
            Insn::call(helpers::GET_SMP_PROCESSOR_ID),
            Insn::stx(Size::DW, R10, -40, R0),
            Insn::mov64_reg(R1, R10),
            Insn::alu64_imm(BPF_ADD, R1, -32),
            Insn::mov64_imm(R2, 16),
            Insn::call(helpers::GET_CURRENT_COMM),
            Insn::st(Size::W, R10, -8, 0),
        ];
        insns.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, globals.fd(), 0));
        insns.extend([
            Insn::mov64_reg(R2, R10),
            Insn::alu64_imm(BPF_ADD, R2, -8),
            Insn::call(helpers::MAP_LOOKUP_ELEM),
            Insn::jmp_imm(BPF_JNE, R0, 0, 2),
            Insn::mov64_imm(R0, 1),
            Insn::exit(),
            Insn::ldx(Size::DW, R1, R0, 0),
            Insn::stx(Size::DW, R10, -16, R1),
        ]);
        insns.extend(output(&rbmap, -64, 56));
        insns.push(Insn::exit());
        let prog = load(ProgramType::RawTracepoint, &insns);
        let mut rb = RingBuf::new(&rbmap).unwrap();

        let cpu = *crate::cpus::online().unwrap().last().unwrap();
        testutil::pin_to_cpu(cpu as usize);
        let now = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes into the timespec we own.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        let before = now();
        assert_eq!(
            prog.test_run(&[0x1234u64, 5].map(u64::to_ne_bytes).concat())
                .unwrap(),
            0
        );
        let after = now();

        let records = consume_all(&mut rb);
        assert_eq!(records.len(), 1);
        let r = &records[0];
        let word = |i: usize| u64::from_ne_bytes(r[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!(word(0), 0x1234);
        assert!(
            (before..=after).contains(&word(1)),
            "{before} {} {after}",
            word(1)
        );
        // SAFETY: getpid and gettid have no preconditions.
        let (pid, tid) = unsafe { (libc::getpid() as u64, libc::gettid() as u64) };
        assert_eq!(word(2), pid << 32 | tid);
        assert_eq!(word(3) as u32, cpu);
        let comm = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
        let got = &r[32..48];
        let got = &got[..got.iter().position(|&b| b == 0).unwrap()];
        assert_eq!(got, comm.trim_end().as_bytes());
        assert_eq!(word(6), 0xdead_beef_cafe);
    }
}
