//! Arguments DTrace takes as run-time values, on the live kernel: `copyinto()` and
//! `copyin()` sizes computed by the probe (reading a USDT probe's buffer, faulting when a
//! copy does not fit), `copyinstr()` sizes likewise, and `setopt()` names and values
//! computed by the probe, applied when the consumer reads the record.

mod common;

use std::path::PathBuf;

use common::{dtrace, Run};

/// `prog N...`: for each N, fires `rt:::data(buf, N)` with `buf` holding the alphabet.
const PROGRAM: &str = r#"
#include <sys/sdt.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    char buf[] = "abcdefghijklmnopqrstuvwxyz";
    for (int i = 1; i < argc; i++) {
        long n = atol(argv[i]);
        DTRACE_PROBE2(rt, data, buf, n);
    }
    return 0;
}
"#;

fn program(name: &str) -> PathBuf {
    common::build_c(&common::scratch("rtargs", name), name, PROGRAM, &["-O2"])
}

fn assert_ok(run: &Run) {
    assert_eq!(
        run.status, 0,
        "status {}\nstdout:\n{}\nstderr:\n{}",
        run.status, run.stdout, run.stderr
    );
}

/// The message of every error line in `stderr` (after the probe), in order.
fn faults(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("dtrace: error in "))
        .map(|l| {
            let (_, what) = l.split_once("): ").expect("an error line names its probe");
            what.split(" at BPF pc ").next().unwrap()
        })
        .collect()
}

#[test]
fn copyinto_and_copyin_take_a_size_computed_at_run_time() {
    let prog = program("sizes");
    let cmd = format!("{} 3 7 12 16", prog.display());
    let run = dtrace(&[
        "-q",
        "-n",
        "rt$target:::data
         {
             this->p = (char *)alloca(17);
             copyinto(arg0, arg1, this->p);
             printf(\"into %d %s\\n\", arg1, stringof(this->p));
             printf(\"in %d %s\\n\", arg1, stringof(copyin(arg0, arg1)));
             printf(\"str %d [%s]\\n\", arg1, copyinstr(arg0, arg1 / 2));
         }
         rt$target:::data /arg1 == 3/
         {
             /* Evaluated left to right: from arg0, 1 + 2 bytes, to this->q + 2. */
             this->q = (char *)alloca(8);
             this->n = 0;
             copyinto(arg0 + (this->n++), (this->n++) + 2, (void *)(this->q + (this->n++)));
             printf(\"order %d %d %s\\n\", this->q[0], this->q[1], stringof(this->q + 2));
         }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>(),
        [
            "into 3 abc",
            "in 3 abc",
            "str 3 []",
            "order 0 0 abc",
            "into 7 abcdefg",
            "in 7 abcdefg",
            "str 7 [ab]",
            "into 12 abcdefghijkl",
            "in 12 abcdefghijkl",
            "str 12 [abcde]",
            "into 16 abcdefghijklmnop",
            "in 16 abcdefghijklmnop",
            "str 16 [abcdefg]",
        ],
        "stderr:\n{}",
        run.stderr
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn computed_sizes_that_do_not_fit_fault_as_in_dtrace() {
    let prog = program("faults");
    let cmd = format!("{} 12", prog.display());
    let run = dtrace(&[
        "-q",
        "-n",
        "rt$target:::data { this->p = (char *)alloca(8); copyinto(arg0, arg1, this->p); printf(\"unreached\\n\"); }
         rt$target:::data { this->p = (char *)alloca(16); copyinto(arg0, arg1, this->p + 8); printf(\"unreached\\n\"); }
         rt$target:::data { this->p = (char *)alloca(16); this->n = -1; copyinto(arg0, this->n, this->p); printf(\"unreached\\n\"); }
         rt$target:::data { copyinto(arg0, arg1, (void *)16); printf(\"unreached\\n\"); }
         rt$target:::data { this->p = (char *)alloca(16); copyinto(8, arg1, this->p); printf(\"unreached\\n\"); }
         rt$target:::data { trace(copyin(arg0, arg1 * 100)); printf(\"unreached\\n\"); }
         rt$target:::data { this->n = 0; trace(copyinstr(arg0, this->n)); printf(\"unreached\\n\"); }
         rt$target:::data { this->p = (char *)alloca(16); copyinto(arg0, arg1, this->p); printf(\"fits %s\\n\", stringof(this->p)); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    // Each faulting clause is abandoned; the last one still runs.
    assert_eq!(
        run.stdout.trim_end(),
        "fits abcdefghijkl",
        "stderr:\n{}",
        run.stderr
    );
    let faults = faults(&run.stderr);
    assert_eq!(faults.len(), 7, "{}", run.stderr);
    // More than the allocation holds, from its start or from inside it.
    assert_eq!(faults[0], "invalid size (0xc)");
    assert_eq!(faults[1], "invalid size (0xc)");
    // A negative size.
    assert_eq!(faults[2], "invalid size (0xffffffffffffffff)");
    // A destination outside scratch memory.
    assert_eq!(faults[3], "invalid address (0x10)");
    // A source that cannot be read.
    assert_eq!(faults[4], "invalid address (0x8)");
    // copyin() of more than scratchsize (256) bytes.
    assert_eq!(faults[5], "invalid size (0x4b0)");
    // copyinstr() of at most 0 bytes reads nothing: DTrace's invalid address.
    assert!(
        faults[6].starts_with("invalid address (0x7"),
        "{}",
        faults[6]
    );
    assert!(
        run.stderr
            .lines()
            .all(|l| !l.starts_with("dtrace: error") || l.contains(":data): invalid ")),
        "{}",
        run.stderr
    );
}

#[test]
fn setopt_takes_a_name_and_value_computed_at_run_time() {
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN
         {
             @a[\"x\"] = sum(1); @a[\"y\"] = sum(3); @a[\"z\"] = sum(2);
             @b[\"x\"] = sum(30); @b[\"y\"] = sum(10); @b[\"z\"] = sum(20);
         }
         BEGIN
         {
             this->pos = 0;
             setopt(strjoin(\"aggsort\", \"pos\"), lltostr(this->pos));
             printa(\"%s %@d %@d\\n\", @a, @b);
             printf(\"--\\n\");
             this->pos++;
             setopt(\"aggsortpos\", lltostr(this->pos));
             printa(\"%s %@d %@d\\n\", @a, @b);
             setopt(\"aggsortpos\", strjoin(\"o\", \"ne\"));
             setopt(strjoin(\"no\", \"such\"));
             exit(0);
         }",
    ]);
    assert_ok(&run);
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        ["x 1 30", "z 2 20", "y 3 10", "--", "y 3 10", "z 2 20", "x 1 30", "",],
        "stderr:\n{}",
        run.stderr
    );
    assert_eq!(
        faults(&run.stderr),
        [
            "couldn't set option \"aggsortpos\" to \"one\": Invalid value for specified option",
            "couldn't set option \"nosuch\" to \"1\": Invalid option name",
        ],
        "{}",
        run.stderr
    );
}

#[test]
fn a_computed_setopt_value_changes_the_sort_of_printa_in_a_probe() {
    let prog = program("sortpos");
    let cmd = format!("{} 0 1", prog.display());
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN { @a[1] = sum(1); @a[2] = sum(3); @b[1] = sum(20); @b[2] = sum(10); }
         rt$target:::data
         {
             setopt(\"aggsortpos\", lltostr(arg1));
             printa(\"%d %@d %@d\\n\", @a, @b);
         }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    let rows: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        rows,
        ["1 1 20", "2 3 10", "2 3 10", "1 1 20"],
        "stderr:\n{}",
        run.stderr
    );
}
