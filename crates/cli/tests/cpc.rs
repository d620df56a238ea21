//! The `cpc` provider on the running kernel: probes made from their names, firing every
//! COUNT events of their counter on each CPU, in user mode, kernel mode or both, with
//! `arg0`/`arg1` the kernel and user PCs; `-l -P cpc`; and the errors of names that name
//! no probe. Software events only where the machine has no hardware counters.

mod common;

use common::{dtrace, row};

/// Whether this machine has a CPU PMU, so hardware events can be counted.
fn has_hardware_counters() -> bool {
    ["cpu", "cpu_core", "cpu_atom", "armv8_pmuv3"]
        .iter()
        .any(|pmu| {
            std::path::Path::new("/sys/bus/event_source/devices")
                .join(pmu)
                .exists()
        })
}

fn online_cpus() -> Vec<String> {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let mut cpus = Vec::new();
    for part in list.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.parse().unwrap(), b.parse().unwrap());
        cpus.extend((a..=b).map(|c| c.to_string()));
    }
    cpus
}

#[test]
fn cpu_clock_fires_every_count_on_each_cpu() {
    // Every 10 ms of CPU clock for 1 s: about 100 firings on each CPU, never more than the
    // clock allows. The CPU clock of an idle CPU stops, so a thread keeps each CPU busy;
    // a virtual CPU its host does not run meanwhile still fires less (seen: 25 of 100 on a
    // loaded 2-CPU VM).
    let cpus = online_cpus();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinners: Vec<_> = cpus
        .iter()
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let run = dtrace(&[
        "-q",
        "-n",
        "cpc:::cpu_clock-all-10000000 { @[cpu] = count(); } tick-1s { exit(0); }",
    ]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for s in spinners {
        s.join().unwrap();
    }
    assert_eq!(run.status, 0, "{}", run.stderr);
    for cpu in &cpus {
        let n = row(&run.stdout, &[cpu]).unwrap_or(0);
        assert!((20..=120).contains(&n), "CPU {cpu}: {n}\n{}", run.stdout);
    }
}

#[test]
fn the_cpu_option_samples_one_cpu_and_a_bare_name_is_enough() {
    let run = dtrace(&[
        "-q",
        "-x",
        "cpu=0",
        "-n",
        "task_clock-all-5000000 { @[cpu] = count(); } \
         cpu_clock-kernel-5000000 { @[cpu] = count(); } tick-500ms { exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(rows.len(), 1, "{}", run.stdout);
    assert!(
        row(&run.stdout, &["0"]).is_some_and(|n| n > 0),
        "{}",
        run.stdout
    );
}

/// `@[mode the PCs say] = count()` of the samples of `probe` in the `-c` command.
fn modes(probe: &str, cmd: &str) -> String {
    let program = format!(
        "cpc:::{probe} /pid == $target/ {{ @[arg0 == 0 && arg1 != 0 ? \"user\" : \
         arg1 == 0 && (uint64_t)arg0 >> 47 == 0x1ffff ? \"kernel\" : \"other\"] = count(); }}"
    );
    let run = dtrace(&["-q", "-c", cmd, "-n", &program]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    run.stdout
}

const USER_LOOP: &str = "awk BEGIN{for(i=0;i<20000000;i++)s+=i}";
const KERNEL_COPY: &str = "dd if=/dev/zero of=/dev/null bs=1M count=20000";

#[test]
fn user_mode_counts_user_code_with_arg1_the_user_pc() {
    let out = modes("cpu_clock-user-1000000", USER_LOOP);
    assert!(row(&out, &["user"]).is_some_and(|n| n > 50), "{out}");
    assert_eq!(row(&out, &["other"]), None, "{out}");
    assert_eq!(row(&out, &["kernel"]), None, "{out}");
    // A process in the kernel all the time gives a user-mode counter (almost) nothing.
    let out = modes("cpu_clock-user-1000000", KERNEL_COPY);
    assert!(row(&out, &["user"]).unwrap_or(0) < 30, "{out}");
    assert_eq!(row(&out, &["kernel"]), None, "{out}");
}

#[test]
fn kernel_mode_counts_kernel_code_with_arg0_the_kernel_pc() {
    let out = modes("cpu_clock-kernel-1000000", KERNEL_COPY);
    assert!(row(&out, &["kernel"]).is_some_and(|n| n > 50), "{out}");
    assert_eq!(row(&out, &["other"]), None, "{out}");
    assert_eq!(row(&out, &["user"]), None, "{out}");
    let out = modes("perf_count_sw_cpu_clock-kernel-1000000", USER_LOOP);
    assert!(row(&out, &["kernel"]).unwrap_or(0) < 30, "{out}");
    assert_eq!(row(&out, &["user"]), None, "{out}");
}

#[test]
fn all_modes_see_both() {
    let out = modes("cpu_clock-all-1000000", KERNEL_COPY);
    assert!(row(&out, &["kernel"]).is_some_and(|n| n > 50), "{out}");
    assert_eq!(row(&out, &["other"]), None, "{out}");
}

#[test]
fn lists_the_events_this_machine_counts() {
    let run = dtrace(&["-l", "-P", "cpc"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let names: Vec<&str> = run
        .stdout
        .lines()
        .skip(1)
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(words.len(), 3, "{l}");
            assert_eq!(words[1], "cpc", "{l}");
            words[2]
        })
        .collect();
    for name in [
        "perf_count_sw_cpu_clock-all-1000000000",
        "cpu_clock-all-1000000000",
        "perf_count_sw_task_clock-all-1000000000",
        "task_clock-all-1000000000",
        "page_faults-all-1000000000",
        "context_switches-all-1000000000",
    ] {
        assert!(names.contains(&name), "{name} missing:\n{}", run.stdout);
    }
    assert!(names.iter().all(|n| n.ends_with("-all-1000000000")));
    assert_eq!(
        names.contains(&"cpu_cycles-all-1000000000"),
        has_hardware_counters(),
        "{}",
        run.stdout
    );
    // A listed probe named alone keeps its id.
    let id_of = |out: &str, name: &str| {
        out.lines()
            .find(|l| l.ends_with(&format!(" {name}")))
            .and_then(|l| l.split_whitespace().next().map(str::to_string))
    };
    let name = "task_clock-all-1000000000";
    assert!(id_of(&run.stdout, name).is_some());
    // Named exactly, or by a provider glob (which makes no probe of a name not listed).
    for provider in ["cpc", "cp*"] {
        let named = dtrace(&["-l", "-n", &format!("{provider}:::{name}")]);
        assert_eq!(named.status, 0, "{}", named.stderr);
        assert_eq!(
            id_of(&named.stdout, name),
            id_of(&run.stdout, name),
            "{}",
            named.stdout
        );
    }
    // `-l` of a description matching nothing says so (and exits 0, as DTrace's does).
    let unlisted = dtrace(&["-l", "-n", "cp*:::task_clock-all-20000"]);
    assert!(
        unlisted.stderr.contains("No probe matches description")
            && unlisted.stdout.lines().count() <= 1,
        "{}{}",
        unlisted.stdout,
        unlisted.stderr
    );
    // A probe named is made, and listed.
    let run = dtrace(&["-l", "-n", "cpc:::task_clock-kernel-20000"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let listed: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().skip(1).collect())
        .collect();
    assert_eq!(
        listed,
        [["cpc", "task_clock-kernel-20000"]],
        "{}",
        run.stdout
    );
}

/// The error `dtrace -n 'DESC {}'` fails with.
fn refused(desc: &str) -> String {
    let run = dtrace(&["-n", &format!("{desc} {{}}")]);
    assert_eq!(run.status, 1, "{desc}: {}", run.stdout);
    run.stderr
}

#[test]
fn names_that_name_no_probe_say_why() {
    let zero = |d: &str| format!("probe description {d} does not match any probes");
    let err = refused("cpc:::cpu_clock-all-100");
    assert!(
        err.contains(&format!(
            "{}: the count 100 is below the cpc provider's minimum of 5000",
            zero("cpc:::cpu_clock-all-100")
        )),
        "{err}"
    );
    let err = refused("cpc:::cpu_clock-all-9223372036854775808");
    assert!(
        err.contains(": the count is above the cpc provider's maximum of 9223372036854775807"),
        "{err}"
    );
    let err = refused("cpc:::nonexistentevent-all-10000");
    assert!(err.contains(": cpc has no event nonexistentevent"), "{err}");
    for malformed in [
        "cpc:::cpu_clock-all-10000bonehead",
        "cpc:::cpu_clock-both-10000",
        "cpc:::cpu_clock-10000",
    ] {
        let err = refused(malformed);
        assert!(
            err.contains(&format!(
                "{}: cpc probe names are EVENT-MODE-COUNT",
                zero(malformed)
            )),
            "{err}"
        );
    }
    // A name alone that is no cpc event is no cpc matter.
    let err = refused("nosuchevent-all-10000");
    assert!(
        err.trim_end().ends_with(&zero(":::nosuchevent-all-10000")),
        "{err}"
    );
}

#[test]
fn hardware_events_need_hardware_counters() {
    for desc in ["cpc:::cpu_cycles-all-100000", "PAPI_tot_ins-user-100000"] {
        let program = format!("{desc} {{ @ = count(); }} tick-200ms {{ exit(0); }}");
        let run = dtrace(&["-q", "-n", &program]);
        if has_hardware_counters() {
            assert_eq!(run.status, 0, "{}", run.stderr);
        } else {
            assert_eq!(run.status, 1, "{}", run.stdout);
            assert!(
                run.stderr.contains(
                    "cannot be counted: this machine has no hardware performance counter"
                ),
                "{}",
                run.stderr
            );
        }
    }
}
