//! D structs, translators and the D library on the live kernel: `curpsinfo` and
//! `curlwpsinfo` from the built-in `procfs.d` against the built-in variables, a script's
//! own struct, typedef, translator and `xlate` (lazily per member, and materialized as a
//! pointer, or whole as a struct value), `-L`/`-xlibdir` library directories (a user library's inline, a file
//! replacing a built-in one, dependencies between files), `-xnolibs`, and DTrace's translator errors. (That a script
//! naming nothing from the library does not parse it is checked in compile.rs; its start-up
//! cost is measured by bench/startup.py, not asserted here.)
//!
//! BEGIN runs in the `dtrace` process itself, so its process is known: its name is
//! `dtrace`, its parent is this test process.

mod common;

use common::{dtrace, Run};

fn assert_ok(run: &Run) {
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
}

/// Run a BEGIN-only script (`-q`) with extra arguments first; its output, trimmed.
fn begin_with(extra: &[&str], body: &str) -> String {
    let script = format!("BEGIN {{ {body} exit(0); }}");
    let mut args = extra.to_vec();
    args.extend(["-q", "-n", &script]);
    let run = dtrace(&args);
    assert_ok(&run);
    run.stdout.trim_end().to_string()
}

fn begin(body: &str) -> String {
    begin_with(&[], body)
}

/// Compile a script file with `-xerrtags`; its stderr (the run must fail).
fn script_error(name: &str, text: &str) -> String {
    let dir = common::scratch("xlate", name);
    let path = dir.join(format!("{name}.d"));
    std::fs::write(&path, text).unwrap();
    let run = dtrace(&["-xerrtags", "-s", path.to_str().unwrap()]);
    assert_ne!(
        run.status, 0,
        "expected a compile error, stdout: {}",
        run.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
    run.stderr
        .replace(&format!("{}: ", path.display()), "SCRIPT: ")
}

#[test]
fn curpsinfo_matches_builtins() {
    let out = begin(
        r#"printf("%d %d %d %d %d %d %s %d\n", curpsinfo->pr_pid == pid, curpsinfo->pr_ppid == ppid,
            curpsinfo->pr_ppid, curpsinfo->pr_uid == uid, curpsinfo->pr_gid == gid,
            curpsinfo->pr_fname == execname, curpsinfo->pr_fname,
            index(curpsinfo->pr_psargs, "/dtrace -") >= 0);"#,
    );
    // pr_psargs: the command line (dtrace's path, then its options).
    assert_eq!(out, format!("1 1 {} 1 1 1 dtrace 1", std::process::id()));
}

#[test]
fn curpsinfo_process_ids() {
    // The test process's own ids, as the kernel sees them (dtrace inherits pgid and sid).
    // SAFETY: getpgrp and getsid(0) have no preconditions and cannot fail.
    let (pgid, sid) = unsafe { (libc::getpgrp(), libc::getsid(0)) };
    let out = begin(
        r#"printf("%d %d %d %d\n", curpsinfo->pr_pgid, curpsinfo->pr_sid, curpsinfo->pr_nlwp,
            curpsinfo->pr_dmodel == PR_MODEL_LP64);"#,
    );
    assert_eq!(out, format!("{pgid} {sid} 1 1"));
}

#[test]
fn cwd_and_root_of_the_process() {
    // BEGIN's process is dtrace, started in this test's working directory.
    let out = begin(r#"printf("%s|%s", cwd, root);"#);
    let here = std::env::current_dir().expect("the working directory");
    assert_eq!(out, format!("{}|/", here.display()));
}

#[test]
fn curpsinfo_argument_and_environment_vectors() {
    // BEGIN's process is dtrace, run here as `dtrace -q -n SCRIPT`: four arguments, the
    // first its path; the environment vector follows argv's NULL, and its first entry is
    // one of the variables dtrace was given (this test's).
    let out = begin(
        r#"printf("%d %s|", curpsinfo->pr_argc,
            copyinstr(*(uint64_t *)copyin(curpsinfo->pr_argv, sizeof (uint64_t))));
        printf("%s|", copyinstr(*(uint64_t *)copyin(curpsinfo->pr_argv + 8, 8)));
        printf("%s", copyinstr(*(uint64_t *)copyin(curpsinfo->pr_envp, 8)));"#,
    );
    let dtrace_path = env!("CARGO_BIN_EXE_dtrace");
    let (args, env0) = out.rsplit_once('|').expect("three fields");
    assert_eq!(args, format!("4 {dtrace_path}|-q"));
    let (name, value) = env0.split_once('=').expect("NAME=value");
    assert_eq!(std::env::var(name).ok().as_deref(), Some(value), "{env0}");
}

#[test]
fn curlwpsinfo_matches_builtins() {
    // BEGIN runs on a CPU: the thread is on-processor ('O'), in the time-sharing class.
    let out = begin(
        r#"printf("%d %d %c %s %d %s %d\n", curlwpsinfo->pr_lwpid == tid,
            curlwpsinfo->pr_state == SONPROC, curlwpsinfo->pr_sname, curlwpsinfo->pr_clname,
            curlwpsinfo->pr_onpro == cpu, curlwpsinfo->pr_name, curlwpsinfo->pr_addr == (uintptr_t)curthread);"#,
    );
    assert_eq!(out, "1 1 O TS 1 dtrace 1");
}

#[test]
fn translated_pointer_as_a_value() {
    // Assigned, the translation is materialized; sizeof and offsetof use the D layout.
    let out = begin(
        r#"this->p = curpsinfo; printf("%d %s %d %d %d\n", this->p->pr_pid == pid, this->p->pr_fname,
            sizeof (curpsinfo->pr_fname), sizeof (lwpsinfo_t) > 0, offsetof(psinfo_t, pr_pid));"#,
    );
    assert_eq!(out, "1 dtrace 16 1 4");
}

#[test]
fn script_struct_translator_and_xlate() {
    let dir = common::scratch("xlate", "script");
    let path = dir.join("mine.d");
    std::fs::write(
        &path,
        r#"#pragma D option quiet
struct myout {
	int o_pid;
	char o_name[16];
	uint64_t o_twice;
};
typedef struct myout myout_t;

translator myout_t < struct task_struct *t > {
	o_pid = t->tgid;
	o_name = t->comm;
	o_twice = t->tgid * 2;
};

BEGIN
{
	printf("%d %s %d %d\n", xlate <myout_t *> (curthread)->o_pid == pid,
	    xlate <myout_t *> (curthread)->o_name,
	    xlate <myout_t> (curthread).o_twice == pid * 2, sizeof (myout_t));
	p = xlate <struct myout *> (curthread);
	printf("%d %s %d\n", p->o_pid == pid, p->o_name, offsetof(struct myout, o_twice));
	exit(0);
}
"#,
    )
    .unwrap();
    let run = dtrace(&["-s", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_ok(&run);
    assert_eq!(run.stdout.trim_end(), "1 dtrace 1 32\n1 dtrace 24");
}

#[test]
fn translated_struct_values() {
    // A translator from a struct value (cast to its own type in the members), a
    // translation assigned whole (members it does not define are zero), to a pointer, and
    // a struct translated to itself.
    let dir = common::scratch("xlate", "values");
    let path = dir.join("values.d");
    std::fs::write(
        &path,
        r#"#pragma D option quiet
struct in { int i; char c; };
struct out { int oi; char oc; };
translator struct out < struct in v > { oi = ((struct in)v).i; };
translator struct in < struct in v > { i = v.i + 1; c = v.c; };
struct in x;
struct out o;
struct in y;

BEGIN
{
	x.i = 41;
	x.c = 'z';
	o = xlate <struct out> (x);
	y = xlate <struct in> (x);
	printf("%d %d %d %d %c\n", o.oi, o.oc, xlate <struct out *> (x)->oi, y.i, y.c);
	exit(0);
}
"#,
    )
    .unwrap();
    let run = dtrace(&["-s", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_ok(&run);
    assert_eq!(run.stdout.trim_end(), "41 0 41 42 z");
}

#[test]
fn library_directory_inline() {
    let dir = common::scratch("xlate", "libdir");
    std::fs::write(
        dir.join("mine.d"),
        "inline int answer = 42;\ninline pid_t mypid = curpsinfo->pr_pid;\n\
         typedef struct pair { int a; int b; } pair_t;\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), "not a library").unwrap();
    let d = dir.to_str().unwrap();
    let body = r#"printf("%d %d %d\n", answer, mypid == pid, sizeof (pair_t));"#;
    assert_eq!(begin_with(&["-L", d], body), "42 1 8");
    assert_eq!(begin_with(&[&format!("-xlibdir={d}")], body), "42 1 8");
    // Without the directory the name is unknown.
    let run = dtrace(&["-q", "-n", "BEGIN { trace(answer); exit(0); }"]);
    assert_ne!(run.status, 0);
    assert!(
        run.stderr.contains("failed to resolve answer"),
        "{}",
        run.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn library_dependencies() {
    // a.d's typedef needs b.d's: it is loaded after it, whatever their names' order.
    let dir = common::scratch("xlate", "libdeps");
    std::fs::write(
        dir.join("a.d"),
        "#pragma D depends_on library b.d\ntypedef b_t a_t;\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.d"), "typedef int b_t;\n").unwrap();
    // c.d needs a module this kernel does not have: it is left out, and d.d with it.
    std::fs::write(
        dir.join("c.d"),
        "#pragma D depends_on module no_such_module_here\ninline int c = nosuch;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("d.d"),
        "#pragma D depends_on library c.d\ninline int d = c;\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    assert_eq!(
        begin_with(&["-L", d], "printf(\"%d\\n\", sizeof (a_t));"),
        "4"
    );
    let run = dtrace(&["-L", d, "-e"]);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    // A dependency on a file that is not there, or a cycle, is an error.
    std::fs::write(dir.join("b.d"), "#pragma D depends_on library a.d\n").unwrap();
    let run = dtrace(&["-L", d, "-e"]);
    let (a, b) = (dir.join("a.d"), dir.join("b.d"));
    assert_eq!(
        (run.status, run.stderr),
        (
            1,
            format!(
                "dtrace: failed to initialize dtrace: Cyclic dependency detected: {} => {}\n",
                a.display(),
                b.display()
            )
        )
    );
    std::fs::write(dir.join("b.d"), "#pragma D depends_on library e.d\n").unwrap();
    let run = dtrace(&["-L", d, "-e"]);
    assert_eq!(
        run.stderr,
        format!(
            "dtrace: failed to initialize dtrace: Invalid library dependency in {}: {}\n",
            b.display(),
            dir.join("e.d").display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
    // A program may not depend on a library.
    assert_eq!(
        script_error(
            "progdep",
            "#pragma D depends_on library net.d\nBEGIN { exit(0); }\n"
        ),
        "dtrace: failed to compile script SCRIPT: [D_PRAGMA_DEPEND] line 1: main program may not explicitly depend on a library\n"
    );
    // Nor on a kernel module that is not there; and a dependency has one of three classes.
    assert_eq!(
        script_error(
            "moddep",
            "#pragma D depends_on module no_such_module_here\nBEGIN { exit(0); }\n"
        ),
        "dtrace: failed to compile script SCRIPT: [D_PRAGMA_DEPEND] line 1: program requires module no_such_module_here\n"
    );
    assert_eq!(
        script_error("classdep", "#pragma D depends_on bogus x\nBEGIN { exit(0); }\n"),
        "dtrace: failed to compile script SCRIPT: [D_PRAGMA_INVAL] line 1: invalid class bogus specified by #pragma depends_on\n"
    );
}

#[test]
fn library_file_replaces_builtin_and_nolibs() {
    let dir = common::scratch("xlate", "override");
    std::fs::write(dir.join("procfs.d"), "inline int curpsinfo = 7;\n").unwrap();
    let d = dir.to_str().unwrap();
    assert_eq!(begin_with(&["-L", d], "trace(curpsinfo);"), "7");
    let _ = std::fs::remove_dir_all(&dir);
    let run = dtrace(&[
        "-xnolibs",
        "-q",
        "-n",
        "BEGIN { trace(curpsinfo->pr_pid); }",
    ]);
    assert_ne!(run.status, 0);
    assert!(
        run.stderr.contains("failed to resolve curpsinfo"),
        "{}",
        run.stderr
    );
}

#[test]
fn missing_library_directory() {
    let run = dtrace(&[
        "-L",
        "/nonexistent-dtrace-libdir",
        "-n",
        "BEGIN { exit(0); }",
    ]);
    assert_ne!(run.status, 0);
    assert_eq!(
        run.stderr,
        "dtrace: failed to open library directory /nonexistent-dtrace-libdir: No such file or directory\n"
    );
}

#[test]
fn translator_errors() {
    let cases: &[(&str, &str, &str)] = &[
        (
            // As DTrace: at the translator's end, where it is complete.
            "memb",
            "struct o { int a; };\ntranslator struct o < struct task_struct *t > {\n\ta = t->pid;\n\tb = t->tgid;\n};\nBEGIN { exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_MEMB] line 5: translator member b is not a member of struct o\n",
        ),
        (
            "cast",
            "BEGIN { trace((uintptr_t)xlate <psinfo_t *> (curthread)); exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_CAST_INVAL] line 1: invalid cast expression: \"pointer to translated data\" to \"uintptr_t\"\n",
        ),
        (
            "library_noconv",
            "BEGIN { trace(curlwpsinfo->pr_nice); exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_NOCONV] line 1: translator does not define conversion for member: pr_nice\n",
        ),
        (
            "none",
            "struct o { int a; };\ntranslator struct o < int x > { a = x; };\nBEGIN { trace(xlate <struct o *> (curthread)->a); exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_NONE] line 3: cannot translate from \"struct task_struct\" to \"struct o\"\n",
        ),
        (
            "incompat",
            "struct o { char *a; };\ntranslator struct o < struct task_struct *t > { a = t->tgid; };\nBEGIN { exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_INCOMPAT] line 2: translator member a definition uses incompatible types: \"char *\" = \"pid_t\"\n",
        ),
        (
            "sou",
            "translator int < struct task_struct *t > { };\nBEGIN { exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_SOU] line 1: translator output type must be a struct or union\n",
        ),
        (
            "incomplete",
            "translator struct nosuch < struct task_struct *t > { a = t->tgid; };\nBEGIN { exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_SOU] line 1: incomplete struct/union/enum struct nosuch\n",
        ),
        (
            "redecl",
            "struct o { int a; };\ntranslator struct o < struct task_struct *t > { a = t->tgid; };\ntranslator struct o < struct task_struct *u > { a = u->pid; };\nBEGIN { exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_REDECL] line 3: translator from struct task_struct * to struct o has already been declared\n",
        ),
        (
            "noconv",
            "struct o { int a; int b; };\ntranslator struct o < struct task_struct *t > { a = t->tgid; };\nBEGIN { trace(xlate <struct o *> (curthread)->b); exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_XLATE_NOCONV] line 3: translator does not define conversion for member: b\n",
        ),
        (
            "member",
            "struct o { int a; };\ntranslator struct o < struct task_struct *t > { a = t->tgid; };\nBEGIN { trace(xlate <struct o *> (curthread)->c); exit(0); }\n",
            "dtrace: failed to compile script SCRIPT: [D_TYPE_MEMBER] line 3: c is not a member of struct o\n",
        ),
    ];
    for (name, text, want) in cases {
        assert_eq!(script_error(name, text), *want, "case {name}");
    }
}
