//! Translators a traced binary carries (`DTRACE_D_SOURCE` of the `dtrace -h` header, a
//! `.note.dtrace` note): a C program built the DTrace way ships the D types and the
//! translator of its probe's stable argument, and `dtrace` translates the probe's
//! `args[0]` with them; two versions whose native structs and translators differ are
//! traced by one clause, each by its own definitions; a binary's D source that is not
//! only types and translators is refused, naming the binary.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::dtrace;

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("run a build step");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One version of the program: its native request struct (C and D), and the D source
/// it ships (the struct again, the stable `reqinfo_t` and the translator).
struct Version {
    native: &'static str,
    /// `struct req` initializers of the two requests.
    requests: [&'static str; 2],
    d_source: &'static str,
}

/// Build `NAME` in `dir` from a provider file and a C program shipping `v.d_source`.
fn build(dir: &Path, name: &str, v: &Version) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    // The provider file declares the types its probe names, as DTrace's do.
    let provider = format!(
        "{}\ntypedef struct reqinfo {{ int ri_id; string ri_path; }} reqinfo_t;\n\
         provider myapp {{ probe request(struct req *r) : (reqinfo_t *r); }};\n",
        v.native
    );
    std::fs::write(dir.join("prov.d"), provider).unwrap();
    let c_string: String = v
        .d_source
        .lines()
        .map(|l| format!("    \"{}\\n\"\n", l.replace('"', "\\\"")))
        .collect();
    let program = format!(
        "#include <stdio.h>\n#include <string.h>\n#include \"prov.h\"\n{}\n\
         DTRACE_D_SOURCE(myapp_d_source,\n{c_string});\n\
         int main(void) {{\n\
         \tstruct req a = {{ {} }}, b = {{ {} }};\n\
         \tMYAPP_REQUEST(&a);\n\tMYAPP_REQUEST(&b);\n\treturn 0;\n}}\n",
        v.native, v.requests[0], v.requests[1]
    );
    std::fs::write(dir.join(format!("{name}.c")), program).unwrap();
    let dtrace = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_dtrace"));
        c.current_dir(dir);
        c
    };
    run(dtrace().args(["-h", "-s", "prov.d"]));
    run(Command::new("gcc")
        .current_dir(dir)
        .args(["-O2", "-c", &format!("{name}.c")]));
    run(dtrace().args(["-G", "-s", "prov.d", &format!("{name}.o")]));
    run(Command::new("gcc")
        .current_dir(dir)
        .args(["-o", name, &format!("{name}.o"), "prov.o"]));
    dir.join(name)
}

/// Version 1: `id` then `path`; the stable id is the native one times 10.
const V1: Version = Version {
    native: "struct req { int id; char *path; };",
    requests: ["1, strdup(\"/index.html\")", "2, strdup(\"/about\")"],
    d_source: "struct req { int id; char *path; };
typedef struct reqinfo { int ri_id; string ri_path; } reqinfo_t;
translator reqinfo_t < struct req *r > {
	ri_id = *(int *)copyin((uintptr_t)&r->id, sizeof (int)) * 10;
	ri_path = copyinstr(*(uintptr_t *)copyin((uintptr_t)&r->path, sizeof (uintptr_t)));
};",
};

/// Version 2: `path` then a `long` id; the stable id is the native one times 100.
const V2: Version = Version {
    native: "struct req { char *path; long id; };",
    requests: ["strdup(\"/v2/index.html\"), 1", "strdup(\"/v2/about\"), 2"],
    d_source: "struct req { char *path; long id; };
typedef struct reqinfo { int ri_id; string ri_path; } reqinfo_t;
translator reqinfo_t < struct req *r > {
	ri_id = *(long *)copyin((uintptr_t)&r->id, sizeof (long)) * 100;
	ri_path = copyinstr(*(uintptr_t *)copyin((uintptr_t)&r->path, sizeof (uintptr_t)));
};",
};

#[test]
fn a_binary_translates_its_own_probe_arguments() {
    let dir = common::scratch("dyn-xlate", "one");
    let exe = build(&dir, "app", &V1);
    let run = dtrace(&[
        "-q",
        "-c",
        exe.to_str().unwrap(),
        "-n",
        "myapp$target:::request { printf(\"%d %s\\n\", args[0]->ri_id, args[0]->ri_path); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "10 /index.html\n20 /about\n\n");
}

#[test]
fn two_versions_each_translated_by_their_own_definitions() {
    let dir = common::scratch("dyn-xlate", "two");
    let one = build(&dir.join("v1"), "app1", &V1);
    let two = build(&dir.join("v2"), "app2", &V2);
    let script = dir.join("both.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\n{}\n{}\n", one.display(), two.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let clause = format!(
        "myapp*:{}::request, myapp*:{}::request {{ printf(\"%s %d %s\\n\", basename(probemod), args[0]->ri_id, args[0]->ri_path); }}",
        one.display(),
        two.display()
    );
    let run = dtrace(&["-q", "-c", script.to_str().unwrap(), "-n", &clause]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "app1 10 /index.html\napp1 20 /about\napp2 100 /v2/index.html\napp2 200 /v2/about\n\n"
    );
}

#[test]
fn a_binary_source_with_more_than_types_and_translators_is_refused() {
    let dir = common::scratch("dyn-xlate", "bad");
    let bad = Version {
        d_source: "inline int answer = 42;",
        ..V1
    };
    let exe = build(&dir, "app", &bad);
    let run = dtrace(&[
        "-q",
        "-c",
        exe.to_str().unwrap(),
        "-n",
        "myapp$target:::request { trace(arg0); }",
    ]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        format!(
            "dtrace: failed to compile script {} (its D source): line 1: a binary's D source may only declare types, translators and providers\n",
            exe.display()
        )
    );
}
