//! CPU lists: parsing the kernel's `0-3,5` syntax and reading the online and possible CPUs.

use crate::error::{Error, Result};

/// The CPUs that are online now (`/sys/devices/system/cpu/online`), ascending.
pub fn online() -> Result<Vec<u32>> {
    read_list("/sys/devices/system/cpu/online")
}

/// The CPUs that could ever exist (`/sys/devices/system/cpu/possible`), ascending.
/// Per-CPU maps hold one value for each of these, in this order. Fixed at boot: read once.
pub fn possible() -> Result<Vec<u32>> {
    static POSSIBLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    if let Some(list) = POSSIBLE.get() {
        return Ok(list.clone());
    }
    let list = read_list("/sys/devices/system/cpu/possible")?;
    Ok(POSSIBLE.get_or_init(|| list).clone())
}

/// Pins the calling thread to `cpu`.
pub fn pin(cpu: u32) -> Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET and sched_setaffinity only touch the set we
    // own, and the size passed is its size.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(Error::io(
            format!("pin to CPU {cpu}"),
            &std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

fn read_list(path: &str) -> Result<Vec<u32>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("read {path}"), &e))?;
    parse_list(&text).map_err(|e| Error::Invalid(format!("{path}: {e}")))
}

/// Parses a CPU list such as `0-3,5\n` into ascending, de-duplicated CPU numbers.
pub fn parse_list(text: &str) -> std::result::Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let number = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| format!("bad CPU number {s:?} in {text:?}"))
        };
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (number(lo)?, number(hi)?);
                if lo > hi {
                    return Err(format!("bad CPU range {part:?}"));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(number(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(parse_list("0-3,5\n"), Ok(vec![0, 1, 2, 3, 5]));
        assert_eq!(parse_list("0"), Ok(vec![0]));
        assert_eq!(parse_list("2,0-1"), Ok(vec![0, 1, 2]));
        assert_eq!(parse_list("1-1,1"), Ok(vec![1]));
        assert_eq!(parse_list("\n"), Ok(vec![]));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_list("a").is_err());
        assert!(parse_list("3-1").is_err());
        assert!(parse_list("1-").is_err());
    }

    #[test]
    fn this_machine_has_cpus() {
        let online = online().unwrap();
        let possible = possible().unwrap();
        assert!(!online.is_empty());
        assert!(online.iter().all(|c| possible.contains(c)));
        let n = std::thread::available_parallelism().unwrap().get();
        assert!(online.len() >= n, "{online:?} vs {n}");
    }
}
