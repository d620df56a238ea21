//! Every script that compiles must load: the kernel verifier accepts the generated code for
//! a broad set of D features, on each program type we generate (BEGIN's raw tracepoint and
//! profile's perf event). Runs `dtrace -e`, which compiles and loads without enabling.

mod common;

use std::process::Command;

const SNIPPETS: &[&str] = &[
    "x = 1; y = x * 3 + 2 / (x + 1) - 7 % 3; z = y << 3 >> 1; trace(z & 0xff | 0x100 ^ 3);",
    "a = (char)300; b = (unsigned short)-1; c = (long long)a * b; trace(c); trace(-a); trace(~b); trace(!c);",
    "x = 5; x += 2; x -= 1; x *= 3; x /= 2; x %= 5; x <<= 2; x >>= 1; x &= 7; x |= 8; x ^= 1; x++; ++x; x--; --x; trace(x);",
    "t0 = timestamp; v0 = vtimestamp; w0 = walltimestamp; trace(t0 + v0 + w0);",
    "trace(pid); trace(tid); trace(ppid); trace(uid); trace(gid); trace(cpu); trace(id); trace(epid);",
    "trace(execname); trace(probeprov); trace(probemod); trace(probefunc); trace(probename);",
    "trace(arg0); trace(arg1); trace(arg5); trace(arg9); trace(curthread != 0); trace(errno);",
    "s = \"abc\"; t = strjoin(s, execname); u = strjoin(t, t); trace(strlen(u)); trace(s == t); trace(s < t); trace(t >= u);",
    "self->a = 1; self->s = execname; self->a++; trace(self->a); trace(self->s); self->a = 0; self->s = \"\";",
    "this->x = 3; this->s = \"q\"; trace(this->x * 2); trace(this->s);",
    "arr[1, \"x\"] = 2; arr[2, execname] += 3; trace(arr[1, \"x\"]); arr[1, \"x\"] = 0; sa[execname] = strjoin(\"a\", \"b\"); trace(sa[execname]);",
    "@c = count(); @s[pid] = sum(arg0); @a[execname, 1] = avg(timestamp); @mn = min(-1); @mx[\"k\"] = max(2); @sd = stddev(arg1);",
    "@q = quantize(arg0); @q2[execname] = quantize(-5, 3); @l = lquantize(arg0, -100, 100, 7); @ll = llquantize(arg1, 10, 0, 6, 20);",
    "@ll2 = llquantize(timestamp, 2, 4, 20, 4); @l2 = lquantize(timestamp % 1000, 0, 1000, 1, 2);",
    "printf(\"%d %u %x %s %c %5.2s %-8d %%\\n\", 1, 2u, 3, \"s\", 65, execname, -4);",
    "x = 3; if (x > 2) { trace(1); if (x > 10) { trace(2); } else { printf(\"%d\", x); } } else trace(3);",
    "ys = pid > 1 ? \"big\" : execname; trace(ys); z = pid > 1 ? 1 : 2ull; trace(z);",
    "x = pid && tid || !cpu ^^ 1; trace(x); trace(1, 2) ; ",
    "@p = count(); printa(@p); printa(\"%@d\\n\", @p); clear(@p); trunc(@p, 3); trunc(@p); normalize(@p, 2); denormalize(@p); setopt(\"quiet\");",
    "x = 1 / (pid - pid); y = 7 % (pid - pid); trace(x + y);",
    "trace(uregs[R_PC]); trace(uregs[R_SP] + uregs[R_R15]); trace(uregs[R_DS]); trace(uregs[R_FS]); trace(uregs[R_TRAPNO]);",
    "ia = (uint8_t *)alloca(24); ia[arg0 & 15] = arg1; trace(inet_ntoa((ipaddr_t *)ia)); trace(inet_ntoa6((struct in6_addr *)ia)); trace(inet_ntoa6((struct in6_addr *)ia, 1)); trace(inet_ntop(arg2 ? AF_INET : AF_INET6, ia)); trace(link_ntop(arg3, ia));",
    "ap = (int *)alloca(16); ap[1] = 2; aq = ap + 3; *aq = 4; trace(*aq); cb = (char *)copyin(arg0, 8); cb[7] = 0;",
    "self->ts = *curthread; tk[1] = *curthread; trace(self->ts.pid + tk[1].pid);",
    "tracemem(curthread, 64); tracemem(&curthread->comm[0], 16, arg0); tracemem(execname, 8);",
    "exit(0);",
    // Many string comparisons in one clause: each byte loop must not leave the verifier a
    // state per byte (it gives up past 8,192 pending branches).
    "sca = \"abc\"; scb = execname; scn = (sca < scb) + (sca <= scb) + (sca == scb) + (sca != scb) + (sca >= scb) + (sca > scb) + (scb < sca) + (scb <= sca) + (scb == sca) + (scb != sca) + (scb >= sca) + (scb > sca) + (sca < sca) + (scb < scb) + (sca == sca) + (scb == scb) + (sca != execname) + (execname > scb) + (scb <= execname) + (sca >= \"abd\"); trace(scn);",
];

fn dtrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dtrace"))
}

#[test]
fn verifier_accepts_generated_code() {
    let mut failures = Vec::new();
    for probe in ["BEGIN", "profile-97", "tick-1s"] {
        for snippet in SNIPPETS {
            // trace(1, 2) is a compile error: keep it out of the loaded set.
            if snippet.contains("trace(1, 2)") {
                continue;
            }
            let script = format!("{probe} {{ {snippet} }}");
            let out = dtrace().args(["-e", "-q", "-n", &script]).output().unwrap();
            if !out.status.success() {
                failures.push(format!(
                    "{script}\n  {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "rejected:\n{}", failures.join("\n"));
}

#[test]
fn many_clauses_on_one_probe_load_together() {
    let script: String = SNIPPETS
        .iter()
        .filter(|s| !s.contains("trace(1, 2)"))
        .map(|s| format!("BEGIN {{ {s} }}\n"))
        .collect();
    let out = dtrace().args(["-e", "-q", "-n", &script]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn compile_errors_exit_1_without_loading() {
    let out = dtrace()
        .args(["-e", "-n", "BEGIN { trace(1, 2); }"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("prototype mismatch"));
}

#[test]
fn struct_values_in_dynamic_variables_load() {
    // A struct value is stored whole; no path of its store deletes the variable.
    let script = "self struct task_struct tsk; struct task_struct g[int];
        BEGIN { self->tsk = *curthread; g[1] = *curthread; trace(self->tsk.pid + g[1].pid); }";
    let out = dtrace().args(["-e", "-q", "-n", script]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn twenty_string_searches_in_one_clause_load_and_run() {
    // Each search is a bpf_loop over the one callback its program holds, so the
    // verifier's work does not grow with the number of searches of unknown strings.
    let mut terms = Vec::new();
    for i in 0..20 {
        terms.push(match i % 3 {
            0 => "index(s, \"t\")",           // 1
            1 => "rindex(s, \"e\")",          // 5
            _ => "strlen(strstr(s, \"ac\"))", // 3
        });
    }
    let want = (0..20).map(|i| [1, 5, 3][i % 3]).sum::<i32>();
    let script = format!(
        "BEGIN {{ s = execname; x = {}; printf(\"%d\\n\", x); exit(0); }}",
        terms.join(" + ")
    );
    let start = std::time::Instant::now();
    let out = dtrace().args(["-q", "-n", &script]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().next(), Some(want.to_string().as_str()));
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn more_aggregations_than_a_program_may_name_maps_run() {
    // A program names at most 64 maps; past 32 aggregations their maps are reached through
    // arrays of maps (one per key and value size), and every one still counts its own.
    let mut script = String::from("BEGIN {\n");
    for i in 0..70 {
        script.push_str(&format!("@s{i}[{i}] = sum({i});\n"));
    }
    script.push_str("@q[\"k\"] = quantize(8); @c = count(); exit(0); }");
    let out = dtrace().args(["-q", "-n", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in 0..70 {
        let row = format!("\n{i:>9}{i:>17}\n");
        assert!(stdout.contains(&row), "no row {row:?} in:\n{stdout}");
    }
    assert!(
        stdout.contains("  k                                                 \n"),
        "{stdout}"
    );
    assert!(stdout.contains("\n                1\n"), "{stdout}");
}

/// A C program built with `-g`, whose `pid` probes' `args[]` are typed from its DWARF.
const USER_TYPES_PROGRAM: &str = r#"
enum kind { K0, K1 };
struct inner { short s; unsigned char bytes[3]; };
struct rec { int id; char name[16]; struct rec *next; enum kind kind; unsigned flag : 1;
             int level : 3; struct inner in[2]; union { int i; char c[4]; } u; const char *label; };
__attribute__((noinline)) int handle(struct rec *r, struct rec **pp, long n) { return r->id + (int)n + (pp != 0); }
__attribute__((noinline)) struct rec *find(struct rec *r) { return r->next; }
int main(void) {
    struct rec b = { 2, "b", 0, K1, 0, -1, {{1, {1, 2, 3}}, {2, {4, 5, 6}}}, {.i = 7}, "x" };
    struct rec a = { 1, "a", &b, K0, 1, 2, {{3, {0}}, {4, {0}}}, {.i = 8}, "y" };
    struct rec *p = &a;
    return handle(&a, &p, 3) + (find(&a) == &b) == 0;
}
"#;

/// What a clause does with user types: each loads (`-e`) on the typed `pid` probes.
const USER_TYPE_SNIPPETS: &[&str] = &[
    "trace(args[0]->id); trace(args[0]->name); trace(args[0]->next->next->id);",
    "trace((*args[1])->name); trace(args[1][0]->in[1].bytes[2]); trace(args[0]->in[args[2] & 1].s);",
    "trace(args[0]->flag + args[0]->level); trace(args[0]->kind); trace(args[0]->u.c[3]);",
    "print(args[0]); print(*args[0]->next); print(&args[0]->in[1]); print(args[0]->in);",
    "self->r = args[0]; this->n = args[0]->next; trace(self->r->name); trace(this->n->id); self->r = 0;",
    "@[args[0]->name, args[0]->next->id] = count(); @s = sum(args[0]->in[0].s); k[args[0]->name] = args[0]->id;",
    "trace(copyinstr((uintptr_t)args[0]->label)); trace(stringof(args[0]->name)); trace(sizeof (*args[0]));",
    "x = args[0]->id > 0 ? args[0]->next : args[0]; trace(x->id); trace((long)args[0] + args[2]);",
];

#[test]
fn user_types_from_dwarf_load() {
    let dir = common::scratch("verifier", "utypes");
    let src = dir.join("ut.c");
    std::fs::write(&src, USER_TYPES_PROGRAM).unwrap();
    let exe = dir.join("ut");
    let gcc = Command::new("gcc")
        .args(["-g", "-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run gcc");
    assert!(
        gcc.status.success(),
        "{}",
        String::from_utf8_lossy(&gcc.stderr)
    );
    let exe = exe.to_str().unwrap();
    let mut failures = Vec::new();
    for probe in [
        "pid$target:a.out:handle:entry",
        "pid$target:a.out:find:return",
    ] {
        for snippet in USER_TYPE_SNIPPETS {
            let snippet = if probe.ends_with("return") {
                // The return probe's args[1] is the struct rec * result: it stands for
                // the entry's struct rec * and (dereferenced) struct rec **.
                snippet
                    .replace("(*args[1])", "args[1]")
                    .replace("args[1][0]", "args[1]")
                    .replace("args[0]", "args[1]")
                    .replace("args[2]", "arg0")
            } else {
                snippet.to_string()
            };
            let script = format!("{probe} {{ {snippet} }}");
            let out = dtrace()
                .args(["-e", "-q", "-n", &script, "-c", exe])
                .output()
                .unwrap();
            if !out.status.success() {
                failures.push(format!(
                    "{script}\n  {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "rejected:\n{}", failures.join("\n"));
}
