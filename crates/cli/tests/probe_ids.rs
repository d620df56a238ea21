//! Probe ids and the other ways the command line names probes, run for real: `-i ID` and
//! `-l -i ID` (the probe `-l` lists with that id), DTrace's words for an id no probe has
//! or one given where none may go, `-P`/`-m`/`-f` reading their argument as a program
//! whose descriptions end with a provider, module or function, options after operands,
//! and the ids of a `pid` glob's functions (one each, the same whichever way the probe is
//! named).

mod common;

use common::{assert_output, dtrace};

const HEADER: &str = "   ID   PROVIDER            MODULE                          FUNCTION NAME\n";

/// The `-l` lines of `args` after the header.
fn listed(args: &[&str]) -> Vec<String> {
    let run = dtrace(args);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""), "{args:?}");
    let lines = run.stdout.strip_prefix(HEADER).expect("the -l header");
    lines.lines().map(str::to_string).collect()
}

/// The id a `-l` line shows.
fn id_of(line: &str) -> &str {
    line.split_whitespace().next().expect("an id")
}

#[test]
fn an_id_names_the_probe_listed_with_it() {
    assert_output(
        &dtrace(&["-l", "-i", "2"]),
        0,
        &format!(
            "{HEADER}    2     dtrace                                                     END\n"
        ),
        "",
    );
    // A system call's probe: listed the same by name and by id, and enabled by id.
    let by_name = listed(&["-l", "-n", "syscall::openat:entry"]);
    assert_eq!(by_name.len(), 1, "{by_name:?}");
    let id = id_of(&by_name[0]).to_string();
    assert_eq!(listed(&["-l", "-i", &id]), by_name);
    let clause =
        format!("{id} {{ printf(\"%s:%s:%s\\n\", probeprov, probefunc, probename); exit(0); }}");
    let run = dtrace(&["-q", "-c", "cat /dev/null", "-i", &clause]);
    assert_output(&run, 0, "syscall:openat:entry\n\n", "");
}

#[test]
fn ids_no_probe_has_are_refused_in_dtrace_words() {
    assert_output(
        &dtrace(&["-i", "0"]),
        1,
        "",
        "dtrace: invalid probe specifier 0: invalid probe identifier 0: Unknown probe identifier\n",
    );
    // `0-2` is the id 0, then the name `-2`.
    assert_output(
        &dtrace(&["-i", "0-2"]),
        1,
        "",
        "dtrace: invalid probe specifier 0-2: invalid probe identifier 0: Unknown probe identifier\n",
    );
    assert_output(
        &dtrace(&["-i", "4-2"]),
        1,
        "",
        "dtrace: invalid probe specifier 4-2: probe description :::-2 does not match any probes\n",
    );
    assert_output(
        &dtrace(&["-i", "99999999999"]),
        1,
        "",
        "dtrace: invalid probe specifier 99999999999: identifier 99999999999 exceeds maximum probe id\n",
    );
    assert_output(
        &dtrace(&["-f", "4"]),
        1,
        "",
        "dtrace: invalid probe specifier 4: probe identifier 4 not permitted when specifying functions\n",
    );
    // An id is read before the macro arguments are checked, as DTrace reads it.
    assert_output(
        &dtrace(&["-i", "0", "-", "2"]),
        1,
        "",
        "dtrace: invalid probe specifier 0: invalid probe identifier 0: Unknown probe identifier\n",
    );
    // -l lists what matches and says what does not, with status 0 as DTrace.
    assert_output(
        &dtrace(&["-l", "-i", "2-2"]),
        0,
        &format!(
            "{HEADER}    2     dtrace                                                     END\n"
        ),
        "dtrace: failed to match :::-2: No probe matches description\n",
    );
}

#[test]
fn provider_module_and_function_options_read_programs() {
    assert_output(
        &dtrace(&["-qP", "dtrace{ printf(\"%s\\n\", probename); exit(0); }"]),
        0,
        "BEGIN\nEND\n\n",
        "",
    );
    let read = listed(&["-l", "-f", "read"]);
    assert!(
        !read.is_empty()
            && read
                .iter()
                .all(|l| l.split_whitespace().nth(3) == Some("read")),
        "{read:?}"
    );
    let module = listed(&["-l", "-m", "syscall:vmlinux"]);
    assert!(
        module.len() > 100 && module.iter().all(|l| l.contains(" syscall ")),
        "{} lines",
        module.len()
    );
    assert_output(
        &dtrace(&["-l", "-m", ":genunix::"]),
        1,
        "",
        "dtrace: invalid probe specifier :genunix::: invalid probe description \":genunix::\": Overspecified probe description\n",
    );
    assert_output(
        &dtrace(&["-P", "profile:::"]),
        1,
        "",
        "dtrace: invalid probe specifier profile:::: invalid probe description \"profile:::\": Overspecified probe description\n",
    );
}

#[test]
fn options_may_follow_operands_and_each_source_must_use_the_last() {
    // Operands are what is not an option, wherever it stands: `10` alone here. DTrace
    // compiles each source on its own, so the first one not using `$1` is named.
    assert_output(
        &dtrace(&["-i", "12", "10", "-i", "23"]),
        1,
        "",
        "dtrace: invalid probe specifier 12: extraneous argument '10' ($1 is not referenced)\n",
    );
    assert_output(
        &dtrace(&["-n", "BEGIN { trace($1); exit(0) }", "7", "-q"]),
        0,
        "7\n",
        "",
    );
}

const FUNCTIONS: &str = r#"
int f1(int x) { return x + 1; }
int f2(int x) { return x + 2; }
int f3(int x) { return x + 3; }
int f4(int x) { return x + 4; }
int f5(int x) { return x + 5; }
int f6(int x) { return x + 6; }
int f7(int x) { return x + 7; }
int f8(int x) { return x + 8; }
int f9(int x) { return x + 9; }
int f10(int x) { return x + 10; }
int main(void) {
    volatile int s = 0;
    s += f1(s) + f2(s) + f3(s) + f4(s) + f5(s) + f6(s) + f7(s) + f8(s) + f9(s) + f10(s);
    return 0;
}
"#;

/// Each of the ten functions listed once, each with an id of its own.
fn one_line_and_id_per_function(lines: &[String]) {
    let mut functions: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    functions.sort();
    let mut expected: Vec<String> = (1..=10).map(|n| format!("f{n}")).collect();
    expected.sort();
    assert_eq!(functions, expected, "{lines:?}");
    let mut ids: Vec<&str> = lines.iter().map(|l| id_of(l)).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10, "{lines:?}");
}

#[test]
fn every_function_of_a_pid_glob_has_its_own_id() {
    let dir = common::scratch("probe-ids", "pid-glob");
    let exe = common::build_c(&dir, "tenf", FUNCTIONS, &["-O0"]);
    let exe = exe.to_str().expect("a UTF-8 path");
    let glob = "pid$target:a.out:f[0-9]*:entry";
    let f3 = "pid$target:a.out:f3:entry";
    // The glob (one probe for its ten functions) then f3 alone, and the other way round:
    // f3 keeps one id, and is listed once.
    one_line_and_id_per_function(&listed(&["-l", "-c", exe, "-n", glob, "-n", f3]));
    let alone_first = listed(&["-l", "-c", exe, "-n", f3, "-n", glob]);
    assert_eq!(
        alone_first[0].split_whitespace().nth(3),
        Some("f3"),
        "{alone_first:?}"
    );
    one_line_and_id_per_function(&alone_first);
    // The id f3 has among the glob's functions enables f3 alone, in a run that finds the
    // glob's probes first, as DTrace finds them.
    let glob_first = listed(&["-l", "-c", exe, "-n", glob]);
    let f3_line = glob_first
        .iter()
        .find(|l| l.split_whitespace().nth(3) == Some("f3"))
        .expect("f3's line");
    let clause = format!(
        "{} {{ printf(\"%s:%s\\n\", probefunc, probename); }}",
        id_of(f3_line)
    );
    let run = dtrace(&[
        "-q",
        "-c",
        exe,
        "-n",
        &format!("{glob} {{}}"),
        "-i",
        &clause,
    ]);
    assert_output(&run, 0, "f3:entry\n\n", "");
}

#[test]
fn a_pid_globs_firings_show_each_function_and_its_id() {
    // Ten functions: one program and uprobe_multi link for them all; the default output
    // still names the function that fired, with the id `-l` lists for it.
    let dir = common::scratch("probe-ids", "pid-glob-fire");
    let exe = common::build_c(&dir, "tenf", FUNCTIONS, &["-O0"]);
    let exe = exe.to_str().expect("a UTF-8 path");
    let glob = "pid$target:a.out:f[0-9]*:entry";
    let listed_ids: std::collections::BTreeMap<String, String> =
        listed(&["-l", "-c", exe, "-n", glob])
            .iter()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                Some((w.get(3)?.to_string(), w.first()?.to_string()))
            })
            .collect();
    let run = dtrace(&["-c", exe, "-n", glob]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let fired: std::collections::BTreeMap<String, String> = run
        .stdout
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let function = w.get(2)?.strip_suffix(":entry")?;
            Some((function.to_string(), w.get(1)?.to_string()))
        })
        .collect();
    assert_eq!(fired.len(), 10, "{}", run.stdout);
    assert_eq!(fired, listed_ids, "{}", run.stdout);
}

/// Two files' static functions of one name, each called `n` times by a function of its file.
const SAME_NAME: [(&str, &str); 2] = [
    (
        "one",
        "__attribute__((noinline)) static int helper(int x) { return x + 1; }\n\
         int call_one(int x) { return helper(x); }\n",
    ),
    (
        "two",
        "__attribute__((noinline)) static int helper(int x) { return x * 3; }\n\
         int call_two(int x) { return helper(x); }\n",
    ),
];

#[test]
fn a_name_at_two_addresses_is_one_probe_at_both() {
    let dir = common::scratch("probe-ids", "same-name");
    let mut sources = Vec::new();
    for (file, code) in SAME_NAME {
        let path = dir.join(format!("{file}.c"));
        std::fs::write(&path, code).expect("write a source");
        sources.push(path);
    }
    let main = "int call_one(int); int call_two(int);\n\
                int main(void) { int s = 0; for (int i = 0; i < 3; i++) s += call_one(i);\n\
                for (int i = 0; i < 2; i++) s += call_two(i); return s == 0; }\n";
    let exe = common::build_c(
        &dir,
        "samename",
        main,
        &[
            "-O1",
            sources[0].to_str().unwrap(),
            sources[1].to_str().unwrap(),
        ],
    );
    let exe = exe.to_str().expect("a UTF-8 path");
    // Listed once, and fired at both addresses: by its name, and among a glob's functions
    // (a glob of more than eight functions is one probe whose cookie names the function).
    let lines = listed(&["-l", "-c", exe, "-n", "pid$target:a.out:helper:entry"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    for description in [
        "pid$target:a.out:helper:entry",
        "pid$target:a.out::entry /probefunc == \"helper\"/",
    ] {
        let run = dtrace(&[
            "-q",
            "-c",
            exe,
            "-n",
            &format!("{description} {{ @[probefunc, arg0] = count(); }}"),
            "-n",
            "END { printa(\"%s %d %@d\\n\", @); }",
        ]);
        // helper(0..2) from call_one, helper(0..1) from call_two.
        assert_output(&run, 0, "helper 2 1\nhelper 0 2\nhelper 1 2\n\n", "");
    }
}
