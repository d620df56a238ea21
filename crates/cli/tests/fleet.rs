//! Issue 13, checked with the real consumers of the formats: a real Prometheus server
//! (Debian's `prometheus`, loopback only) scrapes a running `dtrace` and answers queries on
//! what a C program did, `promtool check metrics` accepts the exposition, and
//! `inferno-flamegraph` draws a flame graph from `-x stackformat=folded` stacks. `.ci/run`
//! installs all three.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long Prometheus has to start and scrape.
const PROMETHEUS_WAIT: Duration = Duration::from_secs(60);

/// `GET path` on `addr`: the status code and the body.
fn http_get(addr: SocketAddr, path: &str) -> Option<(u32, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// A free loopback port (free when this returns; Prometheus takes it right after).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("its address").port()
}

/// A tool the tests need, on the `PATH` or where `cargo install` puts it; fails the test
/// (saying how to install it) if there is none.
fn tool(name: &str, install: &str) -> PathBuf {
    let cargo_bin = std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo/bin"));
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .chain(cargo_bin)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is needed: {install} (.ci/run does)"))
}

/// A `dtrace` started with `args`, serving at the address it printed on stderr.
struct Served {
    child: Child,
    addr: SocketAddr,
    /// The rest of its stderr, read on.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Drop for Served {
    /// A failed test leaves no `dtrace` behind (after a clean end this finds none).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(args: &[&str]) -> Served {
    let mut child = common::spawn(args);
    let mut err = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut line = String::new();
    let addr = loop {
        line.clear();
        if err.read_line(&mut line).expect("read stderr") == 0 {
            let _ = child.kill();
            panic!("dtrace {args:?} ended without serving: {line}");
        }
        if let Some(url) = line
            .trim()
            .strip_prefix("dtrace: serving aggregations at http://")
        {
            break url
                .strip_suffix("/metrics")
                .and_then(|a| a.parse().ok())
                .expect("an address");
        }
    };
    let stderr = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
        rest
    });
    Served {
        child,
        addr,
        stderr: Some(stderr),
    }
}

/// A Prometheus server on loopback scraping `target` every second; killed on drop.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    _dir: PathBuf,
}

impl Prometheus {
    fn start(dir: &Path, target: SocketAddr) -> Prometheus {
        let prometheus = tool("prometheus", "apt-get install prometheus");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
                 scrape_configs:\n  - job_name: dtrace\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .expect("write prometheus.yml");
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .expect("start prometheus");
        Prometheus {
            child,
            addr,
            _dir: dir.to_path_buf(),
        }
    }

    /// The value of the instant query `query` once it has one (each scrape adds one).
    fn value(&self, query: &str) -> Option<String> {
        let encoded: String = query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (status, body) = http_get(self.addr, &format!("/api/v1/query?query={encoded}"))?;
        // `"value":[TIME,"VALUE"]` of the one result.
        let at = body.find("\"value\":[")?;
        let value = body[at..].split('"').nth(3)?;
        (status == 200).then(|| value.to_string())
    }

    /// Wait until `query` gives `expected`; fails with what it gave last.
    fn expect(&self, query: &str, expected: &str) {
        let start = Instant::now();
        let mut last = None;
        while start.elapsed() < PROMETHEUS_WAIT {
            last = self.value(query);
            if last.as_deref() == Some(expected) {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("Prometheus: {query} is {last:?}, not {expected:?}");
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes 300 times 5 bytes and 100 times 100 bytes to /dev/null, then waits for the file
/// named by its argument to exist.
const WRITER: &str = r#"
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    static char buf[100];
    int fd = open("/dev/null", O_WRONLY);
    for (int i = 0; i < 300; i++) write(fd, buf, 5);
    for (int i = 0; i < 100; i++) write(fd, buf, 100);
    while (access(argv[1], F_OK) != 0) usleep(20000);
    return 0;
}
"#;

#[test]
fn prometheus_scrapes_counters_and_histograms_while_tracing() {
    let dir = common::scratch("fleet", "prometheus");
    let writer = common::build_c(&dir, "fleetwriter", WRITER, &["-O0"]);
    let done = dir.join("done");
    let command = format!("{} {}", writer.display(), done.display());
    let served = serve(&[
        "-q",
        "-x",
        "prometheus=127.0.0.1:0",
        "-x",
        "promlabels=writes:comm",
        "-x",
        "promlabels=st:stack",
        "-n",
        "syscall::write:entry /pid == $target/ { @writes[execname] = count(); @size = quantize(arg2); @largest = max(arg2); @st[ustack()] = count(); }
         syscall::write:entry /pid == $target/ { @lin = lquantize(arg2, 0, 200, 10); @log = llquantize(arg2, 10, 0, 3, 10); @twice = quantize(arg2, 2); }",
        "-c",
        &command,
    ]);
    // The endpoint, read directly, until the writer is done writing.
    let start = Instant::now();
    let metrics = loop {
        let (status, body) = http_get(served.addr, "/metrics").expect("a scrape");
        assert_eq!(status, 200);
        if body.contains("dtrace_writes_total{comm=\"fleetwriter\"} 400") {
            break body;
        }
        assert!(
            start.elapsed() < PROMETHEUS_WAIT,
            "no 400 writes in:\n{body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    for line in [
        "# TYPE dtrace_size histogram",
        "dtrace_size_bucket{le=\"7\"} 300",
        "dtrace_size_bucket{le=\"127\"} 400",
        "dtrace_size_bucket{le=\"+Inf\"} 400",
        // The exact sum of the values: 300 × 5 + 100 × 100.
        "dtrace_size_sum 11500",
        "dtrace_size_count 400",
        "# TYPE dtrace_lin histogram",
        "dtrace_lin_bucket{le=\"9\"} 300",
        "dtrace_lin_bucket{le=\"109\"} 400",
        "dtrace_lin_sum 11500",
        "dtrace_lin_count 400",
        "# TYPE dtrace_log histogram",
        "dtrace_log_bucket{le=\"5\"} 300",
        "dtrace_log_bucket{le=\"199\"} 400",
        "dtrace_log_sum 11500",
        "dtrace_log_count 400",
        // Each value counted twice: its weight counts, and so does its sum.
        "dtrace_twice_bucket{le=\"7\"} 600",
        "dtrace_twice_sum 23000",
        "dtrace_twice_count 800",
        "# TYPE dtrace_largest gauge",
        "dtrace_largest 100",
        "dtrace_drops_total{kind=\"principal\"} 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no {line} in:\n{metrics}"
        );
    }
    // The user stacks, folded into one label: every write is in libc's write(), and
    // stacks that differ only in offsets are one series.
    let stacks: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("dtrace_st_total{stack=\""))
        .collect();
    assert!(
        matches!(stacks[..], [one] if one.contains("libc.so.6`") && one.ends_with("\"} 400")),
        "{metrics}"
    );
    let (status, _) = http_get(served.addr, "/").expect("an answer");
    assert_eq!(status, 404);

    // promtool accepts the exposition (lint included).
    let promtool = tool("promtool", "apt-get install prometheus");
    let mut check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    check
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let checked = check.wait_with_output().expect("promtool's verdict");
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{metrics}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    // A real Prometheus scrapes the running dtrace and answers queries on it.
    let prometheus = Prometheus::start(&dir, served.addr);
    prometheus.expect("dtrace_writes_total{comm=\"fleetwriter\"}", "400");
    prometheus.expect("dtrace_size_bucket{le=\"7\"}", "300");
    prometheus.expect("dtrace_size_count", "400");
    prometheus.expect("dtrace_size_sum", "11500");
    prometheus.expect("dtrace_lin_sum / dtrace_lin_count", "28.75");
    // The 300th of 400 values is the last of the bucket up to 7.
    prometheus.expect("histogram_quantile(0.75, dtrace_size_bucket)", "7");
    prometheus.expect("up{job=\"dtrace\"}", "1");
    drop(prometheus);

    // The script ran on all along: the writer ends, and so does dtrace, as with any -c.
    std::fs::write(&done, "").unwrap();
    let mut served = served;
    let status = served.child.wait().expect("wait for dtrace");
    let stderr = served.stderr.take().map(|t| t.join().unwrap());
    assert!(status.success(), "dtrace: {status:?} {stderr:?}");
}

/// Calls getpgid(1) three times and getpgid(2) once, waits for the file `argv[1]`, calls
/// getsid(0), then waits for the file `argv[2]`.
const STEPPER: &str = r#"
#include <unistd.h>
#include <sys/syscall.h>
int main(int argc, char **argv) {
    for (int i = 0; i < 3; i++) syscall(SYS_getpgid, 1);
    syscall(SYS_getpgid, 2);
    while (access(argv[1], F_OK) != 0) usleep(20000);
    syscall(SYS_getsid, 0);
    while (access(argv[2], F_OK) != 0) usleep(20000);
    return 0;
}
"#;

/// Scrape `served` until a scrape has every line of `present` and none of `absent`.
fn scrape_until(served: &Served, present: &[&str], absent: &[&str]) -> String {
    let start = Instant::now();
    loop {
        let (_, body) = http_get(served.addr, "/metrics").expect("a scrape");
        let has = |l: &&str| body.lines().any(|b| b == *l);
        let gone = |l: &&str| !body.lines().any(|b| b.starts_with(*l));
        if present.iter().all(has) && absent.iter().all(gone) {
            return body;
        }
        assert!(
            start.elapsed() < PROMETHEUS_WAIT,
            "want {present:?}, not {absent:?}, in:\n{body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn clear_and_trunc_are_what_a_scrape_sees() {
    let dir = common::scratch("fleet", "clear");
    let stepper = common::build_c(&dir, "fleetstep", STEPPER, &["-O1"]);
    let (step, done) = (dir.join("step"), dir.join("done"));
    let command = format!(
        "{} {} {}",
        stepper.display(),
        step.display(),
        done.display()
    );
    let mut served = serve(&[
        "-q",
        "-x",
        "prometheus=127.0.0.1:0",
        "-n",
        "syscall::getpgid:entry /pid == $target/ { @c[arg0] = count(); @t[arg0] = count(); @q[arg0] = quantize(arg0); }
         syscall::getsid:entry /pid == $target/ { clear(@c); trunc(@t); clear(@q); }",
        "-c",
        &command,
    ]);
    scrape_until(
        &served,
        &[
            "dtrace_c_total{key0=\"1\"} 3",
            "dtrace_c_total{key0=\"2\"} 1",
            "dtrace_t_total{key0=\"1\"} 3",
            "dtrace_q_bucket{key0=\"2\",le=\"3\"} 1",
            "dtrace_q_sum{key0=\"1\"} 3",
            "dtrace_q_sum{key0=\"2\"} 2",
        ],
        &[],
    );
    std::fs::write(&step, "").unwrap();
    // clear(): the keys stay, at 0 (histograms keep their buckets, their sums are 0 too);
    // trunc(): they go.
    scrape_until(
        &served,
        &[
            "dtrace_c_total{key0=\"1\"} 0",
            "dtrace_c_total{key0=\"2\"} 0",
            "dtrace_q_bucket{key0=\"1\",le=\"1\"} 0",
            "dtrace_q_bucket{key0=\"2\",le=\"3\"} 0",
            "dtrace_q_count{key0=\"2\"} 0",
            "dtrace_q_sum{key0=\"1\"} 0",
        ],
        &["dtrace_t_total{"],
    );
    std::fs::write(&done, "").unwrap();
    let status = served.child.wait().expect("wait for dtrace");
    assert!(status.success(), "dtrace: {status:?}");
}

/// Calls getpgid() on 2,000 different pids (none of them exists), then waits for the file
/// `argv[1]`.
const MANY_KEYS: &str = r#"
#include <unistd.h>
#include <sys/syscall.h>
int main(int argc, char **argv) {
    for (int i = 0; i < 2000; i++) syscall(SYS_getpgid, 1000000 + i);
    while (access(argv[1], F_OK) != 0) usleep(20000);
    return 0;
}
"#;

/// The value of the one sample named `name` in an exposition.
fn sample(metrics: &str, name: &str) -> Option<u64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn aggregation_drops_are_served_by_kind() {
    let dir = common::scratch("fleet", "drops");
    let keys = common::build_c(&dir, "fleetkeys", MANY_KEYS, &["-O1"]);
    let done = dir.join("done");
    let command = format!("{} {}", keys.display(), done.display());
    // 128 KiB of aggregation space holds 1,024 keys: the other 976 keys are dropped.
    let mut served = serve(&[
        "-q",
        "-x",
        "prometheus=127.0.0.1:0",
        "-x",
        "aggsize=128k",
        "-n",
        "syscall::getpgid:entry /pid == $target/ { @k[arg0] = count(); }",
        "-c",
        &command,
    ]);
    let start = Instant::now();
    let (series, dropped) = loop {
        let (_, metrics) = http_get(served.addr, "/metrics").expect("a scrape");
        let series = metrics
            .lines()
            .filter(|l| l.starts_with("dtrace_k_total{"))
            .count() as u64;
        let dropped = sample(&metrics, "dtrace_drops_total{kind=\"aggregation\"}")
            .expect("the aggregation drops served");
        if series + dropped == 2000 {
            break (series, dropped);
        }
        assert!(
            start.elapsed() < PROMETHEUS_WAIT,
            "{series} keys and {dropped} drops, not 2000, in:\n{metrics}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!((series, dropped), (1024, 976));
    std::fs::write(&done, "").unwrap();
    let status = served.child.wait().expect("wait for dtrace");
    let stderr = served.stderr.take().map(|t| t.join().unwrap());
    assert!(status.success(), "dtrace: {status:?} {stderr:?}");
}

#[test]
fn a_stalled_client_holds_up_neither_tracing_nor_later_scrapes() {
    let mut served = serve(&[
        "-q",
        "-x",
        "prometheus=127.0.0.1:0",
        "-n",
        "tick-50ms { @ticks = count(); printf(\"tick\\n\"); }",
    ]);
    // A client that connects and sends nothing: the endpoint waits for its request (5 s).
    let stalled = TcpStream::connect(served.addr).expect("connect");
    let start = Instant::now();
    let mut out = BufReader::new(served.child.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    for _ in 0..20 {
        line.clear();
        out.read_line(&mut line).expect("read stdout");
        assert_eq!(line, "tick\n");
    }
    // 20 ticks of 50 ms printed as they came, not held until the client gave up.
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    drop(stalled);
    let (status, metrics) = http_get(served.addr, "/metrics").expect("a scrape");
    assert_eq!(status, 200);
    let ticks = sample(&metrics, "dtrace_ticks_total").expect("the ticks served");
    assert!(ticks >= 20, "{metrics}");
}

#[test]
fn unknown_label_aggregations_names_served_twice_and_bad_addresses_are_errors() {
    let run = common::dtrace(&[
        "-x",
        "prometheus=127.0.0.1:0",
        "-x",
        "promlabels=nosuch:pid",
        "-n",
        "BEGIN { @n = count(); exit(0); }",
    ]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr.lines().last(),
        Some("dtrace: failed to serve metrics: the program has no aggregation @nosuch")
    );
    let run = common::dtrace(&[
        "-x",
        "prometheus=127.0.0.1:0",
        "-n",
        "BEGIN { @drops = count(); exit(0); }",
    ]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr.lines().last(),
        Some("dtrace: failed to serve metrics: @drops and the drop counters are both served as dtrace_drops_total")
    );
    let run = common::dtrace(&["-x", "prometheus=nowhere", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("prometheus"), "{}", run.stderr);
}

/// Spends its time in `fleet_hot_function`, called from `main` (built with -O0, so that even
/// the leaf function keeps a frame pointer and user stacks unwind through it).
const SPINNER: &str = r#"
#include <time.h>
__attribute__((noinline)) unsigned long fleet_hot_function(unsigned long n) {
    unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++) x = x * 31 + i;
    return x;
}
volatile unsigned long sink;
int main(void) {
    time_t end = time(0) + 2;
    while (time(0) < end) sink += fleet_hot_function(1000000);
    return 0;
}
"#;

#[test]
fn folded_user_stacks_make_a_flame_graph() {
    let dir = common::scratch("fleet", "flamegraph");
    let spinner = common::build_c(&dir, "fleetspin", SPINNER, &["-O0"]);
    let run = common::dtrace(&[
        "-q",
        "-x",
        "stackformat=folded",
        "-n",
        "profile-997 /pid == $target/ { @[ustack()] = count(); @e[execname, ustack()] = count(); } profile-997 { @k[stack()] = count(); }",
        "-c",
        &spinner.display().to_string(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    // Every line is `frame;frame;... count`, root first: main before the hot function.
    let hot = lines
        .iter()
        .find(|l| !l.starts_with("fleetspin;") && l.contains("fleet_hot_function"))
        .unwrap_or_else(|| panic!("no hot function in:\n{}", run.stdout));
    let (path, count) = hot.rsplit_once(' ').unwrap();
    assert!(count.parse::<u64>().unwrap() > 0);
    let main = path.find("fleetspin`main").expect("main in the stack");
    assert!(
        main < path.find("fleetspin`fleet_hot_function").unwrap(),
        "{path}"
    );
    assert!(lines.iter().all(|l| l
        .rsplit_once(' ')
        .is_some_and(|(_, n)| n.parse::<u64>().is_ok())));
    // Mixed keys: the execname, then the frames.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("fleetspin;") && l.contains("fleet_hot_function")),
        "{}",
        run.stdout
    );
    // Kernel stacks fold too.
    assert!(
        lines.iter().any(|l| l.contains("vmlinux`")),
        "{}",
        run.stdout
    );

    // inferno-flamegraph reads the folded stacks as they are and draws the hot function.
    let flamegraph = tool("inferno-flamegraph", "cargo install inferno");
    let mut draw = Command::new(flamegraph)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run inferno-flamegraph");
    let folded: String = lines
        .iter()
        .filter(|l| !l.starts_with("fleetspin;"))
        .map(|l| format!("{l}\n"))
        .collect();
    draw.stdin
        .take()
        .unwrap()
        .write_all(folded.as_bytes())
        .unwrap();
    let svg = draw.wait_with_output().expect("a flame graph");
    assert!(
        svg.status.success(),
        "{}",
        String::from_utf8_lossy(&svg.stderr)
    );
    let svg = String::from_utf8_lossy(&svg.stdout);
    assert!(svg.starts_with("<?xml"), "{svg}");
    assert!(svg.contains("fleet_hot_function"), "{svg}");
}
