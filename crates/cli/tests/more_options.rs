//! The rest of DTrace's options, each run for real: `bpflog` and `bpflogsize` (the kernel
//! verifier's log of every program loaded), `syslibdir` (the system D library), `late` and
//! `linknommap` (what this dtrace always does), and the sentences refusing those that
//! cannot work here, from `-x`, `#pragma D option` and `setopt()` alike.

mod common;

use std::path::Path;

use common::{assert_output, dtrace, dtrace_in, scratch};

/// Two programs: BEGIN's clauses, and END's.
const TWO_PROGRAMS: &str = "BEGIN { x = 1; } BEGIN { printf(\"%d\\n\", x); exit(0); } END { }";

/// DTrace's three lines for a log larger than its buffer.
fn incomplete(size: u32) -> String {
    format!(
        "BPF verifier log is incomplete and is not reported.\n\
         Set DTrace option 'bpflogsize' to some greater size for more output.\n\
         (Current size is {size}.)\n"
    )
}

/// The verifier logs shown: each line's text after `BPF: `; fails on any other line.
fn logs(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .map(|l| {
            l.strip_prefix("BPF: ")
                .unwrap_or_else(|| panic!("not a log line: {l:?}\n{stderr}"))
        })
        .collect()
}

#[test]
fn bpflog_shows_the_verifier_log_of_every_program_loaded() {
    let run = dtrace(&["-xbpflog", "-qn", TWO_PROGRAMS]);
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, "1\n\n"),
        "{}",
        run.stderr
    );
    let log = logs(&run.stderr);
    // Every step of each program, and the statistics closing each log.
    assert_eq!(
        log.iter().filter(|l| l.starts_with("processed ")).count(),
        2
    );
    assert!(log.iter().any(|l| l.starts_with("verification time")));
    assert!(
        log.iter().any(|l| l.contains("call bpf_ringbuf_output")),
        "{log:?}"
    );
    // Without it, nothing.
    assert_output(&dtrace(&["-qn", TWO_PROGRAMS]), 0, "1\n\n", "");
    // The words DTrace takes for a flag.
    assert_output(
        &dtrace(&["-xbpflog=no", "-qn", TWO_PROGRAMS]),
        0,
        "1\n\n",
        "",
    );
    let run = dtrace(&["-xbpflog=yes", "-qn", TWO_PROGRAMS]);
    assert_eq!(logs(&run.stderr).len(), log.len());
    assert_output(
        &dtrace(&["-xbpflog=maybe", "-qn", TWO_PROGRAMS]),
        1,
        "",
        "dtrace: failed to set -x bpflog: Invalid value for specified option\n",
    );
}

#[test]
fn bpflog_from_a_pragma() {
    let dir = scratch("moreopts", "bpflog-pragma");
    std::fs::write(
        dir.join("log.d"),
        format!("#pragma D option bpflog\n{TWO_PROGRAMS}\n"),
    )
    .unwrap();
    let run = dtrace_in(&dir, &["-qs", "log.d"]);
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, "1\n\n"),
        "{}",
        run.stderr
    );
    let log = logs(&run.stderr);
    assert_eq!(
        log.iter().filter(|l| l.starts_with("processed ")).count(),
        2
    );
}

#[test]
fn bpflogsize_is_the_log_buffer_given_to_the_kernel() {
    // Too small for either program's log: DTrace's words, once per program; tracing goes on.
    let run = dtrace(&["-xbpflog", "-xbpflogsize=1k", "-qn", TWO_PROGRAMS]);
    assert_output(&run, 0, "1\n\n", &incomplete(1024).repeat(2));
    // Large enough: each log whole.
    let run = dtrace(&["-xbpflog", "-xbpflogsize=4m", "-qn", TWO_PROGRAMS]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let log = logs(&run.stderr);
    assert_eq!(
        log.iter().filter(|l| l.starts_with("processed ")).count(),
        2
    );
    // The kernel takes no buffer under 128 bytes.
    for bad in ["100", "lots", ""] {
        assert_output(
            &dtrace(&[&format!("-xbpflogsize={bad}"), "-qn", TWO_PROGRAMS]),
            1,
            "",
            "dtrace: failed to set -x bpflogsize: Invalid value for specified option\n",
        );
    }
    // Without bpflog, a size changes nothing a loaded program shows.
    assert_output(
        &dtrace(&["-xbpflogsize=1k", "-qn", TWO_PROGRAMS]),
        0,
        "1\n\n",
        "",
    );
}

#[test]
fn syslibdir_replaces_the_built_in_library() {
    let dir = scratch("moreopts", "syslibdir");
    std::fs::create_dir_all(dir.join("sys")).unwrap();
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("sys/numbers.d"), "inline int seven = 7;\n").unwrap();
    std::fs::write(dir.join("mine/numbers.d"), "inline int seven = 77;\n").unwrap();
    let seven = "BEGIN { printf(\"%d\\n\", seven); exit(0); }";
    assert_output(
        &dtrace_in(&dir, &["-xsyslibdir=sys", "-qn", seven]),
        0,
        "7\n\n",
        "",
    );
    // A -L directory's file of the same name replaces the system library's.
    assert_output(
        &dtrace_in(&dir, &["-xsyslibdir=sys", "-Lmine", "-qn", seven]),
        0,
        "77\n\n",
        "",
    );
    // The built-in library (curpsinfo's procfs.d) is not read then.
    let psinfo = "BEGIN { printf(\"%d\\n\", curpsinfo->pr_pid > 0); exit(0); }";
    assert_output(&dtrace_in(&dir, &["-qn", psinfo]), 0, "1\n\n", "");
    assert_output(
        &dtrace_in(&dir, &["-xsyslibdir=sys", "-qn", psinfo]),
        1,
        "",
        &format!("dtrace: invalid probe specifier {psinfo}: failed to resolve curpsinfo: Unknown variable name\n"),
    );
    assert_output(
        &dtrace_in(&dir, &["-xsyslibdir=nowhere", "-qn", seven]),
        1,
        "",
        "dtrace: failed to open library directory nowhere: No such file or directory\n",
    );
    assert_output(
        &dtrace_in(&dir, &["-xsyslibdir", "-qn", seven]),
        1,
        "",
        "dtrace: failed to set -x syslibdir: Invalid value for specified option\n",
    );
    // The library is read before the program: a pragma comes too late.
    std::fs::write(
        dir.join("p.d"),
        "#pragma D option syslibdir=sys\nBEGIN { exit(0); }\n",
    )
    .unwrap();
    assert_output(
        &dtrace_in(&dir, &["-qs", "p.d"]),
        1,
        "",
        "dtrace: failed to compile script p.d: line 1: failed to set option 'syslibdir' to 'sys': Option cannot be used from within a D program\n",
    );
}

#[test]
fn late_static_is_how_translators_are_compiled() {
    let prog = "BEGIN { printf(\"%d\\n\", curpsinfo->pr_pid == pid); exit(0); }";
    assert_output(&dtrace(&["-xlate=static", "-qn", prog]), 0, "1\n\n", "");
    assert_output(
        &dtrace(&["-xlate=dynamic", "-qn", prog]),
        1,
        "",
        "dtrace: failed to set -x late: dynamic translators are not made on Linux: they are DIF code that DTrace puts in DOF for its kernel driver to run, and here each translator is compiled into the programs that use it (late=static)\n",
    );
    for bad in ["-xlate=fast", "-xlate"] {
        assert_output(
            &dtrace(&[bad, "-qn", prog]),
            1,
            "",
            "dtrace: failed to set -x late: Invalid value for specified option\n",
        );
    }
}

#[test]
fn linknommap_links_as_always() {
    let dir = scratch("moreopts", "linknommap");
    std::fs::write(dir.join("prov.d"), "provider nommap {\n\tprobe go();\n};\n").unwrap();
    let object = |opts: &[&str]| {
        let _ = std::fs::remove_file(dir.join("prov.o"));
        let mut args = vec!["-G"];
        args.extend_from_slice(opts);
        args.extend(["-s", "prov.d"]);
        assert_output(&dtrace_in(&dir, &args), 0, "", "");
        std::fs::read(dir.join("prov.o")).expect("-G wrote prov.o")
    };
    assert_eq!(object(&["-xlinknommap"]), object(&[]));
}

/// The options refused here, each with a well-formed value and its reason.
const REFUSED: &[(&str, &str, &str)] = &[
    ("ctypes", "/tmp/c.ctf", "CTF type files are not written here: this dtrace keeps the C and D types it knows (the kernel's BTF, the D library's and the program's declarations) in its own form, and has no CTF writer"),
    ("dtypes", "/tmp/d.ctf", "CTF type files are not written here: this dtrace keeps the C and D types it knows (the kernel's BTF, the D library's and the program's declarations) in its own form, and has no CTF writer"),
    ("debugassert", "mutexes", "mutex assertions are not available here: they check the locks of libdtrace's process-control threads, which this dtrace does not have"),
    ("dofstashpath", "/run/dtrace", "there is no DOF stash here: no dtprobed daemon records the USDT probes of processes; they are read from the stapsdt notes of each process's binaries"),
    ("pcapsize", "128", "pcap( ) is not available in this dtrace, so there are no captured packets for pcapsize to bound"),
    ("pgmax", "16", "no process is grabbed here for pgmax to bound: this dtrace reads a process's mappings and symbols from /proc and its files, without ptrace"),
    ("preallocate", "64m", "memory is not preallocated here: memory freed goes back to the system, so none would stay reserved, and what tracing needs is made before it starts (bufsize, aggsize, dynvarsize, specsize)"),
    ("sysslice", "system.slice", "there are no system daemons to spare here: libdtrace ptraces a process to create its pid and USDT probes unless it is a daemon (a uid below useruid, or in the systemd slice sysslice), and this dtrace creates them from /proc and the process's files, without ptrace"),
    ("useruid", "1000", "there are no system daemons to spare here: libdtrace ptraces a process to create its pid and USDT probes unless it is a daemon (a uid below useruid, or in the systemd slice sysslice), and this dtrace creates them from /proc and the process's files, without ptrace"),
];

#[test]
fn options_that_cannot_work_here_are_refused_in_words() {
    let dir = scratch("moreopts", "refused");
    for (name, value, why) in REFUSED {
        assert_output(
            &dtrace(&[&format!("-x{name}={value}"), "-qn", "BEGIN { exit(0); }"]),
            1,
            "",
            &format!("dtrace: failed to set -x {name}: {why}\n"),
        );
        std::fs::write(
            dir.join("p.d"),
            format!("#pragma D option {name}={value}\nBEGIN {{ exit(0); }}\n"),
        )
        .unwrap();
        assert_output(
            &dtrace_in(&dir, &["-qs", "p.d"]),
            1,
            "",
            &format!("dtrace: failed to compile script p.d: line 1: failed to set option '{name}' to '{value}': {why}\n"),
        );
    }
    assert!(!Path::new("/tmp/c.ctf").exists() && !Path::new("/tmp/d.ctf").exists());
}

#[test]
fn a_malformed_value_is_invalid_before_it_is_refused() {
    for arg in [
        "-xctypes",
        "-xdtypes",
        "-xdofstashpath",
        "-xsysslice",
        "-xdebugassert",
        "-xdebugassert=locks",
        "-xpgmax=-1",
        "-xpgmax",
        "-xuseruid=root",
        "-xpreallocate=lots",
        "-xpreallocate",
        "-xpcapsize=big",
    ] {
        let name = arg[2..].split('=').next().unwrap();
        assert_output(
            &dtrace(&[arg, "-qn", "BEGIN { exit(0); }"]),
            1,
            "",
            &format!("dtrace: failed to set -x {name}: Invalid value for specified option\n"),
        );
    }
    // pcapsize takes no value as its default, as in DTrace: refused for what it is.
    let run = dtrace(&["-xpcapsize", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(
        run.stderr,
        "dtrace: failed to set -x pcapsize: pcap( ) is not available in this dtrace, so there are no captured packets for pcapsize to bound\n"
    );
}

#[test]
fn setopt_of_these_options_while_tracing() {
    // As in DTrace: a compile-time option may be set (to no effect, the program being
    // compiled), unless its value is bad or it is refused here; a run-time one may not.
    let run = dtrace(&[
        "-qn",
        "BEGIN { setopt(\"late\", \"static\"); setopt(\"linknommap\"); setopt(\"late\", \"x\"); \
         setopt(\"useruid\", \"5\"); setopt(\"bpflog\"); setopt(\"bpflogsize\", \"1m\"); \
         setopt(\"pcapsize\", \"64\"); printf(\"done\\n\"); exit(0); }",
    ]);
    let err = |option: &str, value: &str, why: &str| {
        format!("dtrace: error in dt_clause_0 for probe ID 1 (dtrace:::BEGIN): couldn't set option \"{option}\" to \"{value}\": {why}\n\n")
    };
    let illegal = "Operation illegal when tracing is active";
    assert_output(
        &run,
        0,
        "done\n\n",
        &[
            err("late", "x", "Invalid value for specified option"),
            err("useruid", "5", REFUSED[8].2),
            err("bpflog", "1", illegal),
            err("bpflogsize", "1m", illegal),
            err("pcapsize", "64", illegal),
        ]
        .concat(),
    );
}
