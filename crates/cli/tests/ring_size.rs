//! The ring buffer's size: a program whose probes each fire once (BEGIN, END, ERROR) gets a
//! ring as large as all it can send, when that is less than `bufsize`, and never drops
//! what the full-sized ring would have kept; any other program gets `bufsize`. Sizes are
//! read from the kernel (the map's `/proc/PID/fdinfo` entry) while `dtrace` runs.

mod common;

use std::process::Child;
use std::time::{Duration, Instant};

/// `BPF_MAP_TYPE_RINGBUF`, as fdinfo shows a map's type.
const RINGBUF: &str = "27";

/// The `max_entries` (bytes) of the ring buffer map `pid` holds, once it holds one.
fn ring_bytes(pid: u32) -> Option<u64> {
    let dir = format!("/proc/{pid}/fdinfo");
    let mut rings = Vec::new();
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        if field("map_type") == Some(RINGBUF) {
            let id = field("map_id").expect("map_id").to_string();
            let size: u64 = field("max_entries").expect("max_entries").parse().ok()?;
            rings.push((id, size));
        }
    }
    // The reader holds a descriptor of its own on the map.
    rings.sort();
    rings.dedup();
    assert!(rings.len() <= 1, "one ring buffer in {dir}: {rings:?}");
    rings.first().map(|r| r.1)
}

/// Start `dtrace` with `args`, wait for its ring buffer, read its size, end it with
/// SIGINT; the size and the whole run.
fn ring_of_running(args: &[&str]) -> (u64, common::Run) {
    let mut child: Child = common::spawn(args);
    let start = Instant::now();
    let size = loop {
        if let Some(size) = ring_bytes(child.id()) {
            break Some(size);
        }
        if start.elapsed() > Duration::from_secs(20) || child.try_wait().ok().flatten().is_some() {
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // BEGIN has run once the ring is read (`ready` on stdout): the probes are enabled.
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = common::finish(child, &format!("{args:?}"));
    let size = size.unwrap_or_else(|| panic!("no ring buffer: {}", run.stderr));
    (size, run)
}

#[test]
fn a_program_of_begin_and_end_alone_gets_a_ring_of_what_it_sends() {
    let (size, run) = ring_of_running(&[
        "-qn",
        r#"BEGIN { printf("ready\n"); } END { printf("ended\n"); }"#,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "ready\nended\n\n");
    assert_eq!(size, 4096, "a smallest ring: two short records");
}

#[test]
fn a_program_with_a_probe_that_fires_again_gets_bufsize() {
    let probe = r#"BEGIN { printf("ready\n"); } syscall::getppid:entry { trace(1); }"#;
    let (size, run) = ring_of_running(&["-qn", probe]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("ready\n"), "{}", run.stdout);
    assert_eq!(size, 4 << 20, "the default bufsize");
    let (size, _) = ring_of_running(&["-x", "bufsize=64k", "-qn", probe]);
    assert_eq!(size, 64 << 10);
}

#[test]
fn a_pinned_ring_keeps_bufsize() {
    let name = format!("ring_size_{}", std::process::id());
    let pin = format!("ringpin={name}");
    let (size, run) = ring_of_running(&[
        "-x",
        "bufpolicy=ring",
        "-x",
        &pin,
        "-qn",
        r#"BEGIN { printf("ready\n"); }"#,
    ]);
    // The pin goes with the run.
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(size, 4 << 20);
}

#[test]
fn every_record_of_a_one_shot_program_fits_its_ring() {
    // 40 records of over 1 KiB from one BEGIN firing, then 40 faults (each a fault record
    // and an ERROR clause's record) and END's 40 records: far more than the smallest ring,
    // all kept, none dropped, as with the 4 MiB one.
    let mut script = String::new();
    for i in 0..40 {
        script.push_str(&format!(
            "BEGIN {{ printf(\"begin %d %s\\n\", {i}, \"b\"); }}\n\
             BEGIN {{ x = *(int *)(8 * {i}); }}\n\
             END {{ printf(\"end %d %s\\n\", {i}, \"e\"); }}\n"
        ));
    }
    script.push_str("ERROR { printf(\"error %d\\n\", arg3); }\nBEGIN { exit(0); }\n");
    let run = common::dtrace(&["-x", "strsize=1024", "-qn", &script]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("drop"), "{}", run.stderr);
    let count = |prefix: &str| run.stdout.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("begin "), 40, "{}", run.stdout);
    assert_eq!(count("error "), 40, "{}", run.stdout);
    assert_eq!(count("end "), 40, "{}", run.stdout);
    assert_eq!(
        run.stderr.matches("invalid address").count(),
        40,
        "{}",
        run.stderr
    );
}
