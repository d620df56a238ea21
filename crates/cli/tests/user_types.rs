//! `args[]` of `pid` probes typed from the traced program's DWARF (docs/USER-TYPES.md): a
//! C program built here with `gcc -g`, its functions probed on the live kernel; members
//! read through user pointers, char arrays as strings, `print()` of a user struct, a return
//! probe's typed `args[1]`, the same program stripped with its DWARF in a separate file
//! (found by `.gnu_debuglink`, and by build ID), and the program built without `-g`, whose
//! arguments stay 64-bit integers.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Run;

const PROGRAM: &str = r#"
enum color { RED, GREEN = 5, BLUE };
typedef unsigned int tag_t;
struct point { int x, y; };
union val { int i; char c[4]; };
struct rec {
    int id;
    char name[16];
    struct rec *next;
    enum color color;
    tag_t tag;
    unsigned flag : 1;
    int level : 3;
    struct point pts[2];
    union val v;
    const char *label;
};

__attribute__((noinline)) int handle(struct rec *r) { return r->id + 1; }
__attribute__((noinline)) int handle2(struct rec **rp, enum color c) { return (*rp)->id + c; }
__attribute__((noinline)) struct rec *find(int id, struct rec *list) {
    for (; list; list = list->next)
        if (list->id == id)
            return list;
    return 0;
}

int main(void) {
    struct rec b = { 2, "bravo", 0, BLUE, 7, 0, -2, {{5, 6}, {7, 8}}, {.i = 0x41424344}, 0 };
    struct rec a = { 1, "alpha", &b, GREEN, 9, 1, 3, {{1, 2}, {3, 4}}, {.i = 65}, "label a" };
    struct rec *p = &a;
    return handle(&a) + handle2(&p, RED) + (find(2, &a) == &b) == 0;
}
"#;

/// The program built with `flags` into a scratch directory of its own.
fn program(name: &str, flags: &[&str]) -> PathBuf {
    common::build_c(&common::scratch("utypes", name), "utprog", PROGRAM, flags)
}

fn run(exe: &Path, script: &str) -> Run {
    common::trace(&exe.display().to_string(), script)
}

fn tool(cmd: &str, args: &[&str]) {
    common::run_tool(Path::new("."), cmd, args);
}

/// `exe` stripped of its DWARF, which goes to `debug` (and `exe` links to it by name).
fn split_debug(exe: &Path, debug: &Path) {
    let (exe, debug) = (exe.to_str().unwrap(), debug.to_str().unwrap());
    tool("objcopy", &["--only-keep-debug", exe, debug]);
    tool("strip", &["-g", exe]);
    let out = Command::new("readelf")
        .args(["-S", exe])
        .output()
        .expect("readelf");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains(".debug_info"),
        "still has DWARF"
    );
}

const MEMBERS: &str = r#"pid$target:a.out:handle:entry {
    printf("%d %s %d %s|%d %u %d %d %d %d %c\n", args[0]->id, args[0]->name, args[0]->next->id,
        args[0]->next->name, args[0]->color, args[0]->tag, args[0]->flag, args[0]->next->level,
        args[0]->pts[1].y, args[0]->next->v.i, args[0]->next->v.c[3]);
    printf("%s %s %d\n", copyinstr((uintptr_t)args[0]->label), stringof(args[0]->label),
        args[0]->color == GREEN && args[0]->next->color == BLUE);
}"#;

/// (`-q` output ends with an empty line, as DTrace's.)
const MEMBERS_OUT: &str = "1 alpha 2 bravo|5 9 1 -2 4 1094861636 A\nlabel a label a 1\n\n";

#[test]
fn members_through_a_user_pointer() {
    let exe = program("members", &["-g", "-O1"]);
    assert_eq!(run(&exe, MEMBERS).stdout, MEMBERS_OUT);
}

#[test]
fn pointers_to_pointers_and_enum_arguments() {
    let exe = program("ptrptr", &["-g", "-O1"]);
    let out = run(
        &exe,
        r#"pid$target:a.out:handle2:entry {
            printf("%d %s %d %s\n", (*args[0])->id, args[0][0]->next->name, args[1], probefunc);
        }"#,
    );
    assert_eq!(out.stdout, "1 bravo 0 handle2\n\n");
}

#[test]
fn variables_assigned_user_pointers_keep_reading_user_memory() {
    let exe = program("variables", &["-g", "-O1"]);
    let out = run(
        &exe,
        r#"pid$target:a.out:handle:entry { self->r = args[0]; recs[tid] = args[0]->next; }
           pid$target:a.out:handle:return {
               this->p = self->r->next;
               printf("%d %s %d %s\n", self->r->id, self->r->next->name, recs[tid]->id, this->p->name);
           }"#,
    );
    assert_eq!(out.stdout, "1 bravo 2 bravo\n\n");
}

#[test]
fn print_shows_a_user_struct() {
    let exe = program("print", &["-g", "-O1"]);
    let out = run(
        &exe,
        "pid$target:a.out:handle:entry { print(*args[0]->next); print(args[0]->next); }",
    );
    let pad = " ".repeat(44);
    let body = [
        "(struct rec) {",
        " .id = (int)2,",
        " .name = (char [16]) [",
        "  (char)'b',",
        "  (char)'r',",
        "  (char)'a',",
        "  (char)'v',",
        "  (char)'o',",
        " ],",
        " .color = (enum color)BLUE,",
        " .tag = (tag_t)7,",
        " .level = (int)-2,",
        " .pts = (struct point [2]) [",
        "  (struct point) {",
        "   .x = (int)5,",
        "   .y = (int)6,",
        "  },",
        "  (struct point) {",
        "   .x = (int)7,",
        "   .y = (int)8,",
        "  },",
        " ],",
        " .v = (union val) {",
        "  .i = (int)1094861636,",
        "  .c = (char [4]) [",
        "   (char)'D',",
        "   (char)'C',",
        "   (char)'B',",
        "   (char)'A',",
        "  ],",
        " },",
        "}",
    ]
    .map(|l| format!("{pad}{l}\n"))
    .concat();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    let (first, second) = lines.split_at(lines.len() / 2);
    for half in [first, second] {
        assert!(
            half[0].starts_with("0x7f") && half[0].ends_with(" = *"),
            "{}",
            out.stdout
        );
        assert_eq!(half[1..].join("\n") + "\n", body, "{}", out.stdout);
    }
    assert_eq!(first[0], second[0]);
}

#[test]
fn a_return_probe_types_args1_with_the_result() {
    let exe = program("return", &["-g", "-O1"]);
    let out = run(
        &exe,
        r#"pid$target:a.out:find:return { printf("%d %s %d\n", args[1]->id, args[1]->name, args[1]->next == NULL); }
           pid$target:a.out:handle:return { printf("%d\n", args[1]); }"#,
    );
    assert_eq!(out.stdout, "2\n2 bravo 1\n\n");
}

#[test]
fn list_verbose_shows_the_dwarf_types() {
    let exe = program("listv", &["-g", "-O1"]);
    let run = common::dtrace(&[
        "-lv",
        "-n",
        "pid$target:a.out:find:entry,pid$target:a.out:find:return",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let types: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("\t\targs["))
        .collect();
    assert_eq!(
        types,
        [
            "\t\targs[0]: int",
            "\t\targs[1]: struct rec *",
            "\t\targs[0]: uint64_t",
            "\t\targs[1]: struct rec *",
        ],
        "{}",
        run.stdout
    );
}

#[test]
fn a_separate_debug_file_by_debuglink_types_the_same() {
    let exe = program("debuglink", &["-g", "-O1"]);
    let debug = exe.with_file_name("utprog.debug");
    split_debug(&exe, &debug);
    let (e, d) = (exe.to_str().unwrap(), debug.to_str().unwrap());
    tool("objcopy", &[&format!("--add-gnu-debuglink={d}"), e]);
    assert_eq!(run(&exe, MEMBERS).stdout, MEMBERS_OUT);
}

/// DWARF in sections compressed with zlib or with zstd (`SHF_COMPRESSED`, as distributions
/// compress their debug files) types the same as uncompressed DWARF.
#[test]
fn compressed_dwarf_types_the_same() {
    for how in ["zlib", "zstd"] {
        let exe = program(&format!("compressed-{how}"), &["-g", "-O1"]);
        let e = exe.to_str().unwrap();
        tool("objcopy", &[&format!("--compress-debug-sections={how}"), e]);
        let out = Command::new("readelf")
            .args(["-t", e])
            .output()
            .expect("readelf");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("COMPRESSED"),
            "{how}: not compressed"
        );
        assert_eq!(run(&exe, MEMBERS).stdout, MEMBERS_OUT, "{how}");
    }
}

#[test]
fn a_separate_debug_file_by_build_id_types_the_same() {
    // A build ID of this run's own, so the file under /usr/lib/debug is this test's.
    let id = format!("{:08x}{:08x}", std::process::id(), 0x5eed_u32);
    let exe = program("buildid", &["-g", "-O1", &format!("-Wl,--build-id=0x{id}")]);
    let dir = PathBuf::from(format!("/usr/lib/debug/.build-id/{}", &id[..2]));
    std::fs::create_dir_all(&dir).expect("create the build-id directory");
    let debug = dir.join(format!("{}.debug", &id[2..]));
    split_debug(&exe, &debug);
    let out = run(&exe, MEMBERS);
    let _ = std::fs::remove_file(&debug);
    assert_eq!(out.stdout, MEMBERS_OUT);
}

#[test]
fn without_dwarf_arguments_stay_integers() {
    let exe = program("nodwarf", &["-O1"]);
    let out = run(
        &exe,
        "pid$target:a.out:handle2:entry { printf(\"%d %d\\n\", args[1], args[0] == arg0); }",
    );
    assert_eq!(out.stdout, "0 1\n\n");
    let run = common::dtrace(&[
        "-q",
        "-c",
        exe.to_str().unwrap(),
        "-n",
        "pid$target:a.out:handle:entry { trace(args[0]->id); }",
    ]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("operator -> must be applied to a pointer"),
        "{}",
        run.stderr
    );
}

#[test]
fn typed_arguments_are_checked_as_dtrace_checks_them() {
    let exe = program("errors", &["-g", "-O1"]);
    let exe = exe.to_str().unwrap();
    for (script, message) in [
        (
            "pid$target:a.out:handle:entry { trace(args[1]); }",
            "index 1 is out of range for pid",
        ),
        (
            "pid$target:a.out:handle:entry { trace(args[0]->nosuch); }",
            "nosuch is not a member of struct rec",
        ),
    ] {
        let run = common::dtrace(&["-q", "-c", exe, "-n", script]);
        assert_eq!(run.status, 1, "{script}: {}", run.stdout);
        assert!(run.stderr.contains(message), "{script}: {}", run.stderr);
    }
}

/// Every construct on user types compiles to code the verifier accepts, and runs.
#[test]
fn user_type_constructs_load_and_run() {
    let exe = program("verifier", &["-g", "-O1"]);
    let out = run(
        &exe,
        r#"pid$target:a.out:handle:entry {
            this->r = args[0]->next;
            trace(args[0]->pts[arg1 & 1].x); trace(args[0]->name[2]); trace(args[0]->v.c[1]);
            trace(stringof(args[0]->name)); trace(args[0]->next->next == NULL);
            @[args[0]->name] = count(); @n[args[0]->id, args[0]->next->name] = sum(args[0]->tag);
            self->s = args[0]->name; trace(self->s); trace(sizeof (*args[0]));
            print(&args[0]->pts[1]); print(args[0]->pts); trace(args[0]->level + args[0]->flag);
        }
        pid$target:a.out:handle2:entry { print(*args[0]); trace((*args[0])->name); }
        pid$target:a.out:find:return /args[1]/ { print(args[1]); }"#,
    );
    assert!(out.stdout.contains("alpha"), "{}", out.stdout);
}

const CPP_PROGRAM: &str = r#"
#include <string>
struct Base { int b; };
struct Rec : Base {
    int id;
    char name[8];
    std::string s;
    static int count;
    int get() const { return id; }
};
int Rec::count = 0;
namespace ns {
__attribute__((noinline)) int handle(Rec *r, const Rec &ref) { return r->id + ref.b; }
}
extern "C" __attribute__((noinline)) int chandle(Rec *r) { return r->id; }
int main() {
    Rec r;
    r.b = 4;
    r.id = 7;
    r.name[0] = 'x';
    r.name[1] = 0;
    r.s = "hello";
    return ns::handle(&r, r) + chandle(&r) == 0;
}
"#;

/// C++: classes as structs (a base class's members reached through it), references as
/// pointers, functions named as `pid` probes name them (`ns::handle`); `print()` of a
/// class holding a `std::string` runs.
#[test]
fn cpp_classes_references_and_nested_names() {
    let dir = common::scratch("utypes", "cpp");
    let src = dir.join("cpp.cc");
    std::fs::write(&src, CPP_PROGRAM).expect("write the C++ source");
    let exe = dir.join("cppprog");
    tool(
        "g++",
        &[
            "-g",
            "-O1",
            "-o",
            exe.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
    );
    let out = run(
        &exe,
        r#"pid$target:a.out:ns??handle:entry { printf("%s %d %d %d\n", probefunc, args[0]->id, args[1]->b, args[1]->id); }
           pid$target:a.out:chandle:entry { printf("%s %s %d\n", probefunc, args[0]->name, args[0]->b); print(args[0]); }"#,
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        ["ns::handle 7 4 7", "chandle x 4"],
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("(struct Rec) {") && out.stdout.contains(".id = (int)7,"),
        "{}",
        out.stdout
    );
}

/// libc's `fclose` (DWARF's `_IO_new_fclose`, its code in two pieces: gcc moved the cold
/// part out as `.cold`, so DWARF gives ranges, not a start) is typed from the separate debug
/// file Debian's libc6-dbg installs (.ci/run installs it).
#[test]
fn a_libc_function_in_pieces_is_typed_from_its_debug_file() {
    let dir = common::scratch("utypes", "libc");
    let exe = common::build_c(
        &dir,
        "closer",
        "#include <stdio.h>\nint main(void) { FILE *f = fopen(\"/dev/null\", \"r\"); return f == NULL || fclose(f) != 0; }\n",
        &["-O1"],
    );
    let out = run(
        &exe,
        "pid$target:libc.so.6:fclose:entry { printf(\"%d %x\\n\", args[0]->_fileno, (args[0]->_flags >> 16) & 0xffff); exit(0); }",
    );
    // The stream's descriptor, and _IO_MAGIC in the high half of its flags.
    assert_eq!(out.stdout, "3 fbad\n\n", "stderr: {}", out.stderr);
}

/// The DWARF types of an object named with its scope (`struct a.out`rec`, `a.out`tag_t`,
/// `enum a.out`color`) in casts, `sizeof`, `offsetof` and `print()`: a number cast to a
/// pointer to a user struct is an address in the process, read as `args[0]` is.
#[test]
fn scoped_user_types_in_casts_sizeof_offsetof_and_print() {
    let exe = program("scoped", &["-g", "-O1"]);
    let out = run(
        &exe,
        r#"pid$target:a.out:handle:entry {
            this->r = (struct a.out`rec *)arg0;
            printf("%d %d %d %s %d\n", sizeof (struct a.out`rec), offsetof(struct a.out`rec, pts),
                sizeof (a.out`tag_t), this->r->next->name, ((struct a.out`point *)&this->r->pts[1])->y);
            printf("%u %d %d\n", (a.out`tag_t)-1, (enum a.out`color)6 == BLUE, sizeof (union a.out`val));
            print(*(struct a.out`rec *)arg0);
            print(*args[0]);
        }"#,
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        ["72 44 4 bravo 4", "4294967295 1 4"],
        "{}",
        out.stdout
    );
    // The cast's print() is print(*args[0])'s, line for line.
    let prints: Vec<&str> = lines[2..]
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    let (cast, typed) = prints.split_at(prints.len() / 2);
    assert!(cast[1].trim() == "(struct rec) {", "{}", out.stdout);
    assert_eq!(cast, typed, "{}", out.stdout);
}

/// User types in D declarations (a global struct, a typedef, a clause-local copy) and,
/// in a clause of a `pid` probe of the object, unscoped names D and the kernel do not
/// define (`struct point`).
#[test]
fn scoped_user_types_in_declarations_and_unscoped_in_the_objects_clauses() {
    let exe = program("decls", &["-g", "-O1"]);
    let script = exe.with_file_name("decls.d");
    std::fs::write(
        &script,
        r#"struct a.out`rec r;
a.out`tag_t t;

pid$target:a.out:handle:entry
{
    r = *args[0];
    t = r.tag;
    this->p = r.pts[1];
    printf("%s %u %d %d\n", r.name, t, this->p.x, ((struct point *)&args[0]->pts[0])->y);
}
"#,
    )
    .unwrap();
    let run = common::dtrace(&[
        "-q",
        "-s",
        script.to_str().unwrap(),
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "alpha 9 3 2\n\n");
}

/// Outside the object's `pid` clauses (here `BEGIN`), scopes name the objects of the `-c`
/// process: `a.out` its executable.
#[test]
fn a_begin_clause_names_the_target_programs_types() {
    let exe = program("begin", &["-g", "-O1"]);
    let out = run(
        &exe,
        "BEGIN { printf(\"%d %d\\n\", sizeof (struct a.out`rec), offsetof(struct utprog`rec, v)); exit(0); }",
    );
    assert_eq!(out.stdout, "72 60\n\n");
    // A path names its object, with or without a process.
    let script = format!(
        "BEGIN {{ printf(\"%d\\n\", sizeof (union {}`val) + sizeof (struct {}`rec) / 2); exit(0); }}",
        exe.display(),
        exe.display()
    );
    let run = common::dtrace(&["-q", "-n", &script]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "40\n\n");
}

/// Scopes no object has, types the DWARF does not define, and objects without DWARF are
/// refused with DTrace's error and why.
#[test]
fn unknown_user_scopes_and_types_are_refused_clearly() {
    let exe = program("scopeerrors", &["-g", "-O1"]);
    let bare = program("scopenodwarf", &["-O1"]);
    for (exe, script, message) in [
        (
            &exe,
            "BEGIN { trace(sizeof (struct libnosuch.so`rec)); }",
            "failed to resolve type struct libnosuch.so`rec : Unknown module name (libnosuch.so is no object of a -c or -p process, nor the module of this clause's pid probe)",
        ),
        (
            &exe,
            "BEGIN { trace(sizeof (struct a.out`nosuch)); }",
            "failed to resolve type struct a.out`nosuch : Unknown type name",
        ),
        (
            &exe,
            "BEGIN { trace(sizeof (struct /nonexistent/prog`rec)); }",
            "failed to resolve type struct /nonexistent/prog`rec : Unknown module name (/nonexistent/prog is no file)",
        ),
        (
            &bare,
            "BEGIN { trace(sizeof (struct a.out`rec)); }",
            "failed to resolve type struct a.out`rec : Unknown type name (",
        ),
    ] {
        let run = common::dtrace(&["-q", "-c", exe.to_str().unwrap(), "-n", script]);
        assert_eq!(run.status, 1, "{script}: {}", run.stdout);
        assert!(run.stderr.contains(message), "{script}: {}", run.stderr);
    }
    let run = common::dtrace(&["-q", "-n", "BEGIN { trace(sizeof (struct a.out`rec)); }"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("a.out is no object of a -c or -p process"),
        "{}",
        run.stderr
    );
    let bare_run = common::dtrace(&[
        "-q",
        "-c",
        bare.to_str().unwrap(),
        "-n",
        "BEGIN { trace(sizeof (struct a.out`rec)); }",
    ]);
    assert!(
        bare_run.stderr.contains("has no DWARF)"),
        "{}",
        bare_run.stderr
    );
}

/// An instruction offset's probe has no `args[]` (as in DTrace): said so, with what to
/// use instead; `arg0` works there.
#[test]
fn offset_probes_have_no_args() {
    let exe = program("offsets", &["-g", "-O0"]);
    let e = exe.to_str().unwrap();
    let run = common::dtrace(&[
        "-q",
        "-c",
        e,
        "-n",
        "pid$target:a.out:handle:1 { trace(args[0]->id); }",
    ]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains(":handle:1 args[ ] (a pid probe at an instruction offset has no args[ ]; arg0 to arg5 are the argument registers there)")
            && run.stderr.contains("index 0 is out of range for pid"),
        "{}",
        run.stderr
    );
    let out = run_ok(
        e,
        "pid$target:a.out:handle:1 { printf(\"%d\\n\", ((struct a.out`rec *)arg0)->id); }",
    );
    assert_eq!(out, "1\n\n");
}

fn run_ok(cmd: &str, script: &str) -> String {
    common::trace(cmd, script).stdout
}

/// `pid*:PROG:FUNC:entry` with no `PROG` running: its clauses are typed from the `PROG`
/// on `$PATH`, and every later process is traced with typed arguments.
#[test]
fn a_pid_glob_waiting_for_processes_types_their_arguments() {
    let exe = program("later", &["-g", "-O1"]);
    let prog = exe.with_file_name("utlater");
    std::fs::rename(&exe, &prog).unwrap();
    let dir = prog.parent().unwrap();
    let script = dir.join("loop.sh");
    std::fs::write(
        &script,
        format!("for i in 1 2 3; do {}; done\n", prog.display()),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let child = common::command(&[
        "-q",
        "-n",
        r#"pid*:utlater:handle:entry { printf("%d %s %d\n", args[0]->id, args[0]->next->name, args[0]->pts[1].y); }
           pid*:utlater:find:return { printf("found %s\n", args[1]->name); }"#,
        "-c",
        &format!("/bin/sh {}", script.display()),
    ])
    .env("PATH", path)
    .spawn()
    .expect("start dtrace");
    let run = common::finish(child, "pid glob over later processes");
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "1 bravo 4\nfound bravo\n".repeat(3) + "\n",
        "stderr: {}",
        run.stderr
    );
}

/// `dtrace -h`, `dtrace -G` and gcc on `dir`'s provider file `prov` and C source `src`,
/// built with `-g` into `dir/exe`.
fn build_usdt(dir: &Path, prov: &str, src: &str, exe: &str) -> PathBuf {
    let step = |cmd: &mut Command| {
        let out = cmd.current_dir(dir).output().expect("run a build step");
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let dtrace = env!("CARGO_BIN_EXE_dtrace");
    let object = src.replace(".c", ".o");
    let prov_object = prov.replace(".d", ".o");
    step(Command::new(dtrace).args(["-h", "-s", prov]));
    step(Command::new("gcc").args(["-g", "-O1", "-c", src]));
    step(Command::new(dtrace).args(["-G", "-s", prov, &object]));
    step(Command::new("gcc").args(["-g", "-o", exe, &object, &prov_object]));
    dir.join(exe)
}

/// A provider file translating the program's struct (`probe req(struct rec *r) :
/// (outinfo_t *r)`): the script's translator takes the program's type by its scope, and
/// reads its members from the process.
#[test]
fn usdt_translators_take_the_programs_struct_by_its_scope() {
    let dir = common::scratch("utypes", "usdtxlate");
    std::fs::write(
        dir.join("xprov.d"),
        "typedef struct outinfo { int oi_id; string oi_name; } outinfo_t;\nprovider xprov {\n\tprobe req(struct rec *r) : (outinfo_t *r);\n};\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("x.c"),
        "#include \"xprov.h\"\nstruct rec { int id; char *name; };\nint main(void) { struct rec a = {7, \"xname\"}; XPROV_REQ(&a); return a.id == 0; }\n",
    )
    .unwrap();
    let exe = build_usdt(&dir, "xprov.d", "x.c", "x");
    let script = dir.join("x.d");
    std::fs::write(
        &script,
        r#"typedef struct outinfo { int oi_id; string oi_name; } outinfo_t;
translator outinfo_t < struct a.out`rec *r > { oi_id = r->id; oi_name = copyinstr((uintptr_t)r->name); };
xprov$target:::req { printf("%d %s %s\n", args[0]->oi_id, args[0]->oi_name, stringof(((struct x`rec *)arg0)->name)); }
"#,
    )
    .unwrap();
    let run = common::dtrace(&[
        "-q",
        "-s",
        script.to_str().unwrap(),
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "7 xname xname\n\n");
}

/// USDT probes built the DTrace way (`dtrace -h`, `dtrace -G`) whose provider file types
/// an argument as a pointer to the program's own struct: `args[0]` is that struct, from
/// the program's DWARF, read from the process.
#[test]
fn usdt_arguments_declared_as_program_structs_are_typed_from_dwarf() {
    let dir = common::scratch("utypes", "usdt");
    std::fs::write(
        dir.join("uprov.d"),
        "provider uprov {\n\tprobe req(struct rec *r, char *label, int n);\n};\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("u.c"),
        r#"#include "uprov.h"
struct point { int x, y; };
struct rec { int id; char name[16]; struct point pt; };
int main(void) { struct rec a = {7, "usdt", {3, 4}}; UPROV_REQ(&a, "lbl", 5); return a.id == 0; }
"#,
    )
    .unwrap();
    let exe = build_usdt(&dir, "uprov.d", "u.c", "u");
    let out = run(
        &exe,
        r#"uprov$target:::req { printf("%d %s %d %d %s\n", args[0]->id, args[0]->name, args[0]->pt.y, args[2], copyinstr((uintptr_t)args[1])); print(args[0]->pt); }"#,
    );
    assert!(out.stdout.starts_with("7 usdt 4 5 lbl\n"), "{}", out.stdout);
}
