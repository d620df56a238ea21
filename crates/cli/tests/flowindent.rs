//! Flow indentation (`-F`): entry and return probes of a traced program's calls, shown as
//! DTrace shows them (`CPU FUNCTION` heading, `->`/`<-` indented by call depth, `|` for
//! other probes, a clause's output after the column).

mod common;

const PROGRAM: &str = r#"
#include <stdio.h>
__attribute__((noinline)) int leaf(int x) { __asm__ volatile(""); return x + 1; }
__attribute__((noinline)) int mid(int x) { __asm__ volatile(""); return leaf(x) * 2; }
int main(void) { printf("%d\n", mid(3)); return 0; }
"#;

const SCRIPT: &str = "pid$target:flowprog:mid:entry, pid$target:flowprog:leaf:entry,
     pid$target:flowprog:leaf:return, pid$target:flowprog:mid:return { }
     pid$target:flowprog:leaf:entry { printf(\"arg %d\", arg0); }";

#[test]
fn calls_are_indented_by_depth() {
    let dir = common::scratch("flow", "indent");
    let prog = common::build_c(&dir, "flowprog", PROGRAM, &["-O1"]);
    let prog = prog.to_str().unwrap();
    let run = common::dtrace(&["-F", "-n", SCRIPT, "-c", prog]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // The CPU column varies: compare what follows it.
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty() && *l != "8")
        .map(|l| l.get(4..).unwrap_or(l).trim_end())
        .collect();
    assert_eq!(
        lines,
        [
            "FUNCTION",
            " -> mid",
            "   -> leaf",
            // DTrace's `%-41s ` column, then the clause's output.
            &format!("{:<41} arg 3", "    | leaf:entry"),
            "   <- leaf",
            " <- mid",
        ],
        "{}",
        run.stdout
    );
    // The heading (the program's own output may come before it).
    assert!(
        run.stdout.lines().any(|l| l.trim_end() == "CPU FUNCTION"),
        "{}",
        run.stdout
    );
}
