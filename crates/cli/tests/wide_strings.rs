//! Wide strings of a traced process (`%ls`, `%ws`, `%lc`): a C program built here with
//! `gcc -g` keeps `wchar_t` text in a struct; a `pid` probe typed from its DWARF prints the
//! array, copied in from the process's memory, and one of its characters, as UTF-8; so does
//! an array made of the bytes `copyin()` read, as one holding a `wchar_t *` would.

mod common;

const PROGRAM: &str = r#"
#include <wchar.h>
struct person { int id; wchar_t name[8]; wchar_t empty[2]; };
__attribute__((noinline)) int greet(struct person *p) { return p->id + (int)p->name[0]; }
int main(void) {
    struct person p = { 7, L"h\u00e9llo\u263a", L"" };
    return greet(&p) == 0;
}
"#;

#[test]
fn wide_strings_in_the_traced_process() {
    let dir = common::scratch("wide", "person");
    let exe = common::build_c(&dir, "person", PROGRAM, &["-g", "-O1"]);
    let run = common::trace(
        &exe.display().to_string(),
        r#"pid$target:a.out:greet:entry {
            printf("[%ls][%-12ls][%.3ws][%ls]\n", args[0]->name, args[0]->name,
                args[0]->name, args[0]->empty);
            printf("[%lc][%3wc][%d]\n", args[0]->name[1], args[0]->name[6], args[0]->id);
            printf("[%ls]\n", *(int (*)[8])copyin((uintptr_t)args[0]->name, 32));
        }"#,
    );
    assert_eq!(
        run.stdout,
        "[h\u{e9}llo\u{263a}][h\u{e9}llo\u{263a}   ][h\u{e9}][]\n[\u{e9}][  \0][7]\n[h\u{e9}llo\u{263a}]\n\n"
    );
}

#[test]
fn a_wide_string_larger_than_scratch_is_refused_in_words() {
    let dir = common::scratch("wide", "scratch");
    let exe = common::build_c(&dir, "person", PROGRAM, &["-g", "-O1"]);
    let run = common::dtrace(&[
        "-x",
        "scratchsize=16",
        "-q",
        "-c",
        &exe.display().to_string(),
        "-n",
        r#"pid$target:a.out:greet:entry { printf("%ls\n", args[0]->name); }"#,
    ]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr.ends_with(
            "printf( ) argument #2 is an array of 32 bytes, more than scratchsize (16) can copy in\n"
        ),
        "{}",
        run.stderr
    );
}
