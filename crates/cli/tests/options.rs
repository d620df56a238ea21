//! Options DTrace honours, each run for real: what the option changes in a traced program
//! (or in `-G`'s object), and the sentence that refuses a value, or an option Linux cannot
//! give.

mod common;

use common::{assert_output, dtrace, dtrace_in, scratch};

const SEVEN_KEYS: &str = "BEGIN { @[1, 2, 3, 4, 5, 6, 7] = count(); exit(0) }";

#[test]
fn tregs_bounds_key_tuples() {
    // A tuple takes one more element than there are tuple registers.
    assert_output(
        &dtrace(&["-xtregs=5", "-qn", SEVEN_KEYS]),
        1,
        "",
        &format!("dtrace: invalid probe specifier {SEVEN_KEYS}: Insufficient tuple registers to generate code\n"),
    );
    let run = dtrace(&["-xtregs=6", "-qn", SEVEN_KEYS]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        common::row(&run.stdout, &["1", "2", "3", "4", "5", "6", "7"]),
        Some(1)
    );
    // The default, 8, takes nine keys (of arrays and aggregations) and not ten.
    let nine =
        "BEGIN { x[1, 2, 3, 4, 5, 6, 7, 8, 9] = 1; trace(x[1, 2, 3, 4, 5, 6, 7, 8, 9]); exit(0) }";
    assert_output(&dtrace(&["-qn", nine]), 0, "1\n", "");
    let nine_keys = "BEGIN { @[0, 1, 2, 3, 4, 5, 6, 7, 8] = count(); exit(0); }";
    let run = dtrace(&["-qn", nine_keys]);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    let ten = "BEGIN { x[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] = 1; exit(0) }";
    assert_output(
        &dtrace(&["-qn", ten]),
        1,
        "",
        &format!("dtrace: invalid probe specifier {ten}: Insufficient tuple registers to generate code\n"),
    );
    assert_output(&dtrace(&["-xtregs=9", "-qn", ten]), 0, "\n", "");
    assert_output(
        &dtrace(&["-xtregs=0", "-qn", SEVEN_KEYS]),
        1,
        "",
        "dtrace: failed to set -x tregs: Invalid value for specified option\n",
    );
}

/// Whether `line` is a listing's instruction line: `INS OFF: OPCODE ...` (`0004 00032: b7 `).
fn is_instruction_line(line: &str) -> bool {
    let b = line.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let hex = |r: std::ops::Range<usize>| {
        b.get(r).is_some_and(|d| {
            d.iter()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
        })
    };
    digits(0..4)
        && b.get(4) == Some(&b' ')
        && digits(5..10)
        && line.get(10..12) == Some(": ")
        && hex(12..14)
        && b.get(14) == Some(&b' ')
}

/// The instruction lines right after the line `header` in `listing`.
fn instructions_after<'a>(listing: &'a str, header: &str) -> Vec<&'a str> {
    let mut lines = listing.lines().skip_while(|l| *l != header);
    assert_eq!(lines.next(), Some(header), "{listing}");
    assert_eq!(
        lines.next(),
        Some("INS  OFF    OPCODE                  INSTRUCTION"),
        "{listing}"
    );
    lines.take_while(|l| is_instruction_line(l)).collect()
}

#[test]
fn dash_s_lists_each_clause_as_dtrace_does() {
    let run = dtrace(&["-S", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let clause = instructions_after(
        &run.stderr,
        "Disassembly of clause :::BEGIN, <dt_clause_0>:",
    );
    assert!(clause.len() > 20, "{}", run.stderr);
    assert!(
        clause
            .iter()
            .any(|l| l.ends_with("call bpf_ringbuf_output")),
        "{}",
        run.stderr
    );
    // The clause alone by default: no program listing.
    assert!(!run.stderr.contains("program"), "{}", run.stderr);
    // Each of a clause's probe descriptions is a statement of its own.
    let run = dtrace(&["-S", "-qn", "BEGIN, END { trace(1); } BEGIN { exit(0); }"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let headers = listing_headers(&run.stderr);
    assert_eq!(
        headers,
        [
            "Disassembly of clause :::BEGIN, <dt_clause_0>:",
            "Disassembly of clause :::END, <dt_clause_1>:",
            "Disassembly of clause :::BEGIN, <dt_clause_2>:",
        ],
        "{}",
        run.stderr
    );
}

#[test]
fn disasm_picks_the_listings() {
    let begin = "BEGIN { exit(0); }";
    let run = dtrace(&["-S", "-xdisasm=8", "-qn", begin]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let program = instructions_after(&run.stderr, "Disassembly of final program dtrace:::BEGIN:");
    assert!(
        program.last().is_some_and(|l| l.ends_with("exit")),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("clause"), "{}", run.stderr);
    // Every listing, in DTrace's order: the clauses when compiled, then the programs.
    let run = dtrace(&["-S", "-xdisasm=15", "-qn", begin]);
    let headers = listing_headers(&run.stderr);
    assert_eq!(
        headers,
        [
            "Disassembly of clause :::BEGIN, <dt_clause_0>:",
            "Disassembly of program dtrace:::BEGIN:",
            "Disassembly of linked program dtrace:::BEGIN:",
            "Disassembly of final program dtrace:::BEGIN:",
        ],
        "{}",
        run.stderr
    );
    // As C's atoi reads it: no digits is 0, no listing.
    assert_output(&dtrace(&["-S", "-xdisasm=none", "-qn", begin]), 0, "\n", "");
    for bad in ["-xdisasm=-1", "-xdisasm"] {
        assert_output(
            &dtrace(&["-S", bad, "-qn", begin]),
            1,
            "",
            "dtrace: failed to set -x disasm: Invalid value for specified option\n",
        );
    }
}

#[test]
fn verbose_lists_the_clauses_as_dash_s_does() {
    let run = dtrace(&["-xverbose", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let clause = instructions_after(
        &run.stderr,
        "Disassembly of clause :::BEGIN, <dt_clause_0>:",
    );
    assert!(clause.len() > 20, "{}", run.stderr);
    assert_output(
        &dtrace(&["-xverbose=1", "-qn", "BEGIN { exit(0); }"]),
        1,
        "",
        "dtrace: failed to set -x verbose: Invalid value for specified option\n",
    );
}

#[test]
fn stdc_s_is_kr_c_without_stdc() {
    let dir = scratch("options", "stdc");
    std::fs::write(
        dir.join("stdc.d"),
        "BEGIN\n{\n#ifdef __STDC__\n\ttrace(\"iso\");\n#else\n\ttrace(\"k&r\");\n#endif\n\texit(0);\n}\n",
    )
    .unwrap();
    for (mode, said) in [("a", "iso"), ("c", "iso"), ("t", "iso"), ("s", "k&r")] {
        let run = dtrace_in(&dir, &["-C", &format!("-xstdc={mode}"), "-qs", "stdc.d"]);
        assert_output(&run, 0, &format!("{said}\n"), "");
    }
    assert_output(
        &dtrace_in(&dir, &["-C", "-xstdc=k", "-qs", "stdc.d"]),
        1,
        "",
        "dtrace: failed to set -x stdc: Invalid value for specified option\n",
    );
}

#[test]
fn version_hides_later_identifiers() {
    let dir = scratch("options", "version");
    let script = |version: &str, body: &str| {
        let name = format!("v{version}.d");
        std::fs::write(
            dir.join(&name),
            format!("#pragma D option version={version}\n{body}"),
        )
        .unwrap();
        name
    };
    // strstr() came in D 1.1: a 1.0 program may name a variable so.
    let v10 = script(
        "1.0",
        "int strstr;\nBEGIN { strstr = 3; trace(strstr); exit(0); }\n",
    );
    assert_output(&dtrace_in(&dir, &["-qs", &v10]), 0, "3\n", "");
    let v11 = script("1.1", "int strstr;\nBEGIN { exit(0); }\n");
    assert_output(
        &dtrace_in(&dir, &["-qs", &v11]),
        1,
        "",
        &format!("dtrace: failed to compile script {v11}: line 2: built-in identifier redeclared: strstr\n"),
    );
    let call = script("1.0", "BEGIN { trace(strstr(\"ab\", \"b\")); exit(0); }\n");
    assert_output(
        &dtrace_in(&dir, &["-qs", &call]),
        1,
        "",
        &format!(
            "dtrace: failed to compile script {call}: line 2: undefined function name: strstr\n"
        ),
    );
    // At the current version, built-ins cannot be redeclared as globals (scalars or
    // associative arrays); a thread-local variable may take the name.
    for decl in ["int pid;", "int trace[int];"] {
        let text = format!("{decl} BEGIN {{ exit(0); }}");
        let name = if decl.contains("pid") { "pid" } else { "trace" };
        assert_output(
            &dtrace(&["-qn", &text]),
            1,
            "",
            &format!(
                "dtrace: invalid probe specifier {text}: built-in identifier redeclared: {name}\n"
            ),
        );
    }
    assert_output(
        &dtrace(&[
            "-qn",
            "self int trace; BEGIN { self->trace = 2; trace(self->trace); exit(0); }",
        ]),
        0,
        "2\n",
        "",
    );
}

#[test]
fn pspec_reads_outer_words_as_probe_descriptions() {
    let dir = scratch("options", "pspec");
    std::fs::write(dir.join("on.d"), "#pragma D option pspec\n\nint*x\n").unwrap();
    std::fs::write(dir.join("off.d"), "\nint*x\n").unwrap();
    assert_output(
        &dtrace_in(&dir, &["-s", "on.d"]),
        1,
        "",
        "dtrace: failed to compile script on.d: line 3: expected predicate and/or actions following probe description\n",
    );
    // Without it, `int*x` declares a pointer (whose `;` is missing).
    assert_output(
        &dtrace_in(&dir, &["-s", "off.d"]),
        1,
        "",
        "dtrace: failed to compile script off.d: line 3: syntax error near end-of-input\n",
    );
    assert_output(
        &dtrace(&["-xpspec", "-n", "int*x"]),
        1,
        "",
        "dtrace: invalid probe specifier int*x: probe description :::int*x does not match any probes\n",
    );
}

#[test]
fn the_end_of_the_text_in_syntax_errors() {
    // DTrace's lexer looks past a new identifier, and reads the end there as a character.
    for (text, words) in [
        ("BEGIN { trace(zz", "end-of-input"),
        ("BEGIN { trace(pid", "end of input"),
        ("BEGIN { zz = 1; trace(zz", "end of input"),
        ("BEGIN { trace(1);", "end of input"),
    ] {
        assert_output(
            &dtrace(&["-n", text]),
            1,
            "",
            &format!("dtrace: invalid probe specifier {text}: syntax error near {words}\n"),
        );
    }
}

#[test]
fn amin_checks_probe_description_attributes() {
    // An unnamed provider's description is Unstable.
    assert_output(
        &dtrace(&["-xamin=Evolving/Evolving/Common", "-qn", "BEGIN { exit(0); }"]),
        1,
        "",
        "dtrace: invalid probe specifier BEGIN { exit(0); }: attributes for clause (Unstable/Unstable/Common) are less than predefined minimum\n",
    );
    assert_output(
        &dtrace(&[
            "-xamin=Evolving/Evolving/Common",
            "-qn",
            "dtrace:::BEGIN { trace(1); exit(0); }",
        ]),
        0,
        "1\n",
        "",
    );
    assert_output(
        &dtrace(&["-xamin=Firm", "-qn", "BEGIN { exit(0); }"]),
        1,
        "",
        "dtrace: failed to set -x amin: Invalid value for specified option\n",
    );
}

#[test]
fn cpu_puts_tick_on_that_cpu() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    // The last online CPU: tick would otherwise fire on the first.
    let last = online.trim().rsplit([',', '-']).next().unwrap().to_string();
    let run = dtrace(&[
        &format!("-xcpu={last}"),
        "-qn",
        "tick-100ms { trace(cpu); exit(0); }",
    ]);
    assert_output(&run, 0, &format!("{last}\n"), "");
}

#[test]
fn debug_writes_dtrace_debug_lines() {
    let run = dtrace(&["-xdebug", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let messages: Vec<&str> = run
        .stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("dtrace DEBUG ")?;
            let (secs, message) = rest.split_once(": ")?;
            (secs.parse::<u64>().ok()? > 0).then_some(message)
        })
        .collect();
    assert_eq!(messages.len(), run.stderr.lines().count(), "{}", run.stderr);
    assert!(
        messages.contains(&"attached dtrace:::BEGIN (0 links)"),
        "{}",
        run.stderr
    );
    assert!(
        dtrace(&["-qn", "BEGIN { exit(0); }"]).stderr.is_empty(),
        "no messages without it"
    );
}

#[test]
fn anonymous_tracing_is_refused() {
    let why = "anonymous tracing is not available on Linux: there is no DTrace driver to hold an enabling made at boot (-A) for a later dtrace to claim (-a)";
    assert_output(&dtrace(&["-a"]), 1, "", &format!("dtrace: -a: {why}\n"));
    assert_output(
        &dtrace(&["-A", "-n", "BEGIN"]),
        1,
        "",
        &format!("dtrace: -A: {why}\n"),
    );
    assert_output(
        &dtrace(&["-xgrabanon", "-n", "BEGIN"]),
        1,
        "",
        &format!("dtrace: failed to set -x grabanon: {why}\n"),
    );
}

#[test]
fn library_errors_name_the_library_file() {
    let dir = scratch("options", "libdir");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/faulty.d"),
        "BEGIN {\n\tnonexistent_action();\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("s.d"), "BEGIN { exit(0); }\n").unwrap();
    assert_output(
        &dtrace_in(&dir, &["-xlibdir=sub", "-n", "BEGIN {exit(0)}"]),
        1,
        "",
        "dtrace: invalid probe specifier BEGIN {exit(0)}: \"sub/faulty.d\", line 2: undefined function name: nonexistent_action\n",
    );
    assert_output(
        &dtrace_in(&dir, &["-xerrtags", "-Lsub", "-s", "s.d"]),
        1,
        "",
        "dtrace: failed to compile script s.d: [D_FUNC_UNDEF] \"sub/faulty.d\", line 2: undefined function name: nonexistent_action\n",
    );
}

#[test]
fn link_options_of_dash_g() {
    let dir = scratch("options", "link");
    std::fs::write(
        dir.join("prov.d"),
        "provider test_prov {\n\tprobe go();\n};\n",
    )
    .unwrap();
    let g = |opts: &[&str]| {
        let _ = std::fs::remove_file(dir.join("prov.o"));
        let mut args = vec!["-G"];
        args.extend_from_slice(opts);
        args.extend(["-s", "prov.d"]);
        dtrace_in(&dir, &args)
    };
    assert_output(&g(&["-xlinktype=elf"]), 0, "", "");
    assert!(dir.join("prov.o").exists());
    assert_output(
        &g(&["-xlinktype=foo"]),
        1,
        "",
        "dtrace: failed to set -x linktype: Invalid value for specified option\n",
    );
    assert_output(
        &g(&["-xlinktype=dof"]),
        1,
        "",
        "dtrace: failed to set -x linktype: DOF objects are not made on Linux: -G writes ELF objects whose probes are stapsdt notes, which the kernel's uprobes fire without DTrace's DOF loader\n",
    );
    assert_output(
        &g(&["-xnonsense"]),
        1,
        "",
        "dtrace: failed to set -x nonsense: Invalid option name\n",
    );
    // ldpath: the named linker makes the object.
    let run = g(&["-xldpath=/nonexistent/ld"]);
    assert_eq!(run.status, 1);
    // The shell's words, then DTrace's.
    let (shell, ours) = run.stderr.split_once('\n').expect("two lines");
    assert!(shell.contains("/nonexistent/ld"), "{}", run.stderr);
    assert_eq!(
        ours,
        "dtrace: failed to link script prov: failed to link prov.o: /nonexistent/ld exited with status 127\n"
    );
    assert!(!dir.join("prov.o").exists());
    assert_output(&g(&["-xldpath=ld"]), 0, "", "");
    let headers = std::process::Command::new("readelf")
        .arg("-S")
        .arg(dir.join("prov.o"))
        .output()
        .expect("run readelf");
    assert!(
        String::from_utf8_lossy(&headers.stdout).contains(".note.GNU-stack"),
        "the linked object keeps the provider object's sections"
    );
    assert_output(
        &dtrace(&["-xlinkmode=foo", "-qn", "BEGIN { exit(0); }"]),
        1,
        "",
        "dtrace: failed to set -x linkmode: Invalid value for specified option\n",
    );
}

#[test]
fn flags_with_nothing_to_act_on_take_no_value() {
    for flag in ["kdefs", "udefs"] {
        assert_output(
            &dtrace(&[&format!("-x{flag}"), "-qn", "BEGIN { exit(0); }"]),
            0,
            "\n",
            "",
        );
    }
    for flag in [
        "knodefs", "unodefs", "kdefs", "udefs", "strip", "core", "pspec", "debug",
    ] {
        assert_output(
            &dtrace(&[&format!("-x{flag}=1"), "-qn", "BEGIN { exit(0); }"]),
            1,
            "",
            &format!("dtrace: failed to set -x {flag}: Invalid value for specified option\n"),
        );
    }
    // Names no DTrace has.
    assert_output(
        &dtrace(&["-xsyslibs", "-qn", "BEGIN { exit(0); }"]),
        1,
        "",
        "dtrace: failed to set -x syslibs: Invalid option name\n",
    );
}

#[test]
fn core_aborts_at_exit() {
    // Where a core goes is the system's choice (core_pattern): run in a scratch directory.
    let dir = scratch("options", "core");
    let run = dtrace_in(&dir, &["-xcore", "-qn", "BEGIN { trace(1); exit(0); }"]);
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (128 + libc::SIGABRT, "1\n"),
        "{}",
        run.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aggpercpu_shows_each_cpus_value_under_the_merged_one() {
    // BEGIN fires on one CPU: that CPU shows the value, every other its empty one (0, and
    // min()'s starting value), each CPU of the machine on a line of its own.
    let run = dtrace(&[
        "-x",
        "aggpercpu",
        "-qn",
        "BEGIN { @s = sum(5); @m = min(3); exit(0) }",
    ]);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let lines: Vec<&str> = run.stdout.lines().skip(1).collect();
    assert_eq!(lines.len(), 2 * (1 + cpus), "{}", run.stdout);
    for (agg, value, empty) in [
        (&lines[..=cpus], "5", "0"),
        (&lines[cpus + 1..], "3", "9223372036854775807"),
    ] {
        assert_eq!(agg[0].trim(), value, "{}", run.stdout);
        let mut fired = 0;
        for (cpu, line) in agg[1..].iter().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(words[..2], ["[CPU", &format!("{cpu}]")], "{}", run.stdout);
            match words[2] {
                v if v == value => fired += 1,
                v => assert_eq!(v, empty, "{}", run.stdout),
            }
        }
        assert_eq!(fired, 1, "{}", run.stdout);
    }
    // Without it, the merged values alone.
    let run = dtrace(&["-qn", "BEGIN { @s = sum(5); exit(0) }"]);
    assert_output(&run, 0, "\n                5\n", "");
}

/// The `Disassembly of ...:` header lines of a listing, in order.
fn listing_headers(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("Disassembly of "))
        .collect()
}
