//! What compiles, loads: random well-typed D programs (`progen`) run on the live kernel, and
//! each must either run to its `exit(0)` or be refused with a D error (`[D_...]` under
//! `-xerrtags`). A verifier rejection, a panic, a crash or a hang fails the test with the
//! program that caused it.
//!
//! Seeds are fixed so CI is deterministic. The larger run recorded in docs/ROBUSTNESS.md:
//!
//! ```text
//! DTRACE_PROGEN_COUNT=2000 DTRACE_PROGEN_SEED=1 cargo test --release -p dtrace \
//!     --test generated_programs -- --nocapture
//! ```

mod common;
mod progen;

use progen::ProgramGen;

/// Programs per test run by default.
const DEFAULT_COUNT: u64 = 60;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How one generated program fared.
enum Outcome {
    Ran,
    /// Refused with this D error (its tag and message, without the location).
    Refused(String),
}

/// Run `program`; a panic of this test names it unless it ran or was refused with a D error.
fn check(program: &str, seed: u64, n: u64) -> Outcome {
    let run = common::dtrace(&["-q", "-xerrtags", "-n", program]);
    // dtrace reports a verifier rejection as its own bug ("... rejected ...; this is a bug
    // in dtrace"): never a refusal in words, whatever else it says.
    let bug = run.stderr.contains("this is a bug in dtrace") || run.stderr.contains("panicked");
    let refused_in_words = run.status == 1 && run.stderr.contains("[D_") && !bug;
    match run.status {
        0 if !bug => Outcome::Ran,
        _ if refused_in_words => Outcome::Refused(reason(&run.stderr)),
        status => panic!(
            "program {n} of seed {seed} neither ran nor was refused with a D error \
             (status {status}):\n{program}\nstderr:\n{}",
            run.stderr
        ),
    }
}

/// The tag and message of a D error, numbers masked, so that alike refusals count together.
fn reason(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.contains("[D_"))
        .unwrap_or_default();
    let from_tag = &line[line.find("[D_").unwrap_or(0)..];
    from_tag
        .chars()
        .take(100)
        .map(|c| if c.is_ascii_digit() { 'N' } else { c })
        .collect()
}

#[test]
fn generated_programs_run_or_are_refused_in_words() {
    let seed = env_u64("DTRACE_PROGEN_SEED", 20261126);
    let count = env_u64("DTRACE_PROGEN_COUNT", DEFAULT_COUNT);
    let mut gen = ProgramGen::new(seed);
    let (mut ran, mut refused) = (0u64, 0u64);
    let mut reasons: std::collections::BTreeMap<String, u64> = Default::default();
    let start = std::time::Instant::now();
    for n in 0..count {
        let program = gen.program();
        match check(&program, seed, n) {
            Outcome::Ran => ran += 1,
            Outcome::Refused(why) => {
                refused += 1;
                *reasons.entry(why).or_default() += 1;
            }
        }
    }
    println!(
        "generated programs: {count} (seed {seed}): {ran} ran, {refused} refused with a D \
         error, in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    for (why, n) in &reasons {
        println!("  {n:5} refused: {why}");
    }
    // The generator means to write valid D: if most programs were refused, it (or the
    // compiler) went wrong, and the test would prove little.
    assert!(
        ran * 10 >= count * 8,
        "only {ran} of {count} generated programs ran ({refused} refused)"
    );
}
