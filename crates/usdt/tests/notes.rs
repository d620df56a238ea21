//! The macros in a real binary (this test): the notes `readelf -n` finds in it, the shared
//! semaphore they name, and `enabled!`/`probe!` following the semaphore. (Uprobes on
//! these sites, on the real kernel, are tested by dtrace-probes' USDT reader tests.)

use std::cell::Cell;
use std::process::Command;
use std::sync::atomic::Ordering;

/// Not inlined: each copy of a probe site is a note of its own.
#[inline(never)]
fn fire(i: u64, evaluated: &Cell<u32>) {
    let name = c"name";
    dtrace_usdt::probe!(selftest, plain, i, name, -3i32, 200u8);
    dtrace_usdt::probe!(selftest, lazy, {
        evaluated.set(evaluated.get() + 1);
        i
    });
}

/// A second site of `selftest:plain` in another function: same semaphore.
#[inline(never)]
fn other_site() {
    dtrace_usdt::probe!(selftest, plain, 1u64, 2u64, 3u64, 4u64);
    dtrace_usdt::probe!(selftest, noargs);
}

/// (name, semaphore, arguments) of this binary's `selftest` notes, from `readelf -n`.
fn notes() -> Vec<(String, u64, String)> {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("readelf")
        .arg("-n")
        .arg(&exe)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines().map(str::trim);
    let mut notes = Vec::new();
    while let Some(line) = lines.next() {
        if line != "Provider: selftest" {
            continue;
        }
        let name = lines.next().unwrap().strip_prefix("Name: ").unwrap();
        let loc = lines.next().unwrap();
        let sem = loc.rsplit_once("Semaphore: 0x").unwrap().1;
        let args = lines.next().unwrap().strip_prefix("Arguments:").unwrap();
        notes.push((
            name.to_string(),
            u64::from_str_radix(sem, 16).unwrap(),
            args.trim().to_string(),
        ));
    }
    notes.sort();
    notes
}

fn symbol(name: &str) -> u64 {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("nm").arg(&exe).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.ends_with(&format!(" {name}")))
        .unwrap();
    u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
}

#[test]
fn notes_name_sites_arguments_and_one_semaphore_per_probe() {
    let notes = notes();
    let shape: Vec<(&str, usize)> = notes
        .iter()
        .map(|(n, _, args)| (n.as_str(), args.split_whitespace().count()))
        .collect();
    assert_eq!(
        shape,
        [("lazy", 1), ("noargs", 0), ("plain", 4), ("plain", 4)]
    );
    for (_, sem, args) in &notes {
        assert_ne!(*sem, 0);
        for a in args.split_whitespace() {
            assert!(a.starts_with("-8@%r"), "{a}");
        }
    }
    let plain = symbol("__usdt_sema.selftest.plain");
    assert_eq!((notes[2].1, notes[3].1), (plain, plain));
    assert_eq!(notes[0].1, symbol("__usdt_sema.selftest.lazy"));
    assert_ne!(notes[0].1, plain);
}

#[test]
fn enabled_and_lazy_probes_follow_the_semaphore() {
    let evaluated = Cell::new(0);
    let sema = dtrace_usdt::semaphore!(selftest, lazy);
    assert!(!dtrace_usdt::enabled!(selftest, lazy));
    fire(1, &evaluated);
    other_site();
    assert_eq!(evaluated.get(), 0, "arguments evaluated while disabled");

    // What the kernel does when a tracer attaches with ref_ctr_offset.
    sema.fetch_add(1, Ordering::SeqCst);
    assert!(dtrace_usdt::enabled!(selftest, lazy));
    assert!(!dtrace_usdt::enabled!(selftest, plain));
    fire(2, &evaluated);
    fire(3, &evaluated);
    assert_eq!(evaluated.get(), 2);
    sema.fetch_sub(1, Ordering::SeqCst);
    assert!(!dtrace_usdt::enabled!(selftest, lazy));
    fire(4, &evaluated);
    assert_eq!(evaluated.get(), 2);

    // Every site of a probe sees the same semaphore.
    let plain = dtrace_usdt::semaphore!(selftest, plain);
    assert!(std::ptr::eq(
        plain,
        dtrace_usdt::semaphore!(selftest, plain)
    ));
    assert!(!std::ptr::eq(plain, sema));
}

dtrace_usdt::d_source!("struct selftest { int a; };");

/// `d_source!` puts its text in a `.note.dtrace` note of the binary, as `readelf` reads it.
#[test]
fn d_source_is_a_note_of_the_binary() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("readelf")
        .args(["-x", ".note.dtrace"])
        .arg(&exe)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The hex dump's text column: the header, the owner, the D source.
    let column: String = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("0x"))
        .filter_map(|l| l.get(l.len().saturating_sub(16)..))
        .collect();
    assert!(
        column.contains("dtrace..struct selftest { int a; };."),
        "{text}"
    );
}
