//! Shell-style pattern matching of probe description fields (`*`, `?`, `[a-z]`, `[!x]`, `\`).

/// Whether `text` matches `pattern`; an empty pattern matches anything, as an omitted
/// probe description field does.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    pattern.is_empty() || matches(pattern.as_bytes(), text.as_bytes())
}

fn matches(p: &[u8], t: &[u8]) -> bool {
    // Iterative matcher with backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                b'[' => {
                    if let Some((hit, next)) = class(&p[pi..], t[ti]) {
                        if hit {
                            pi += next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == b'[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                b'\\' if pi + 1 < p.len() && p[pi + 1] == t[ti] => {
                    pi += 2;
                    ti += 1;
                    continue;
                }
                b'\\' if pi + 1 < p.len() => {}
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Match `c` against the class at the start of `p` (`[...]`): (matched, class length),
/// or None if the class is not closed.
fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == b']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == b'-' && p[i + 2] != b']' {
            if p[i] <= c && c <= p[i + 2] {
                hit = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                hit = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn patterns() {
        assert!(glob_match("", "anything"));
        assert!(glob_match("read*", "readv"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("read", "readv"));
        assert!(glob_match("r?ad", "read"));
        assert!(glob_match("[rw]*", "write"));
        assert!(!glob_match("[!rw]*", "write"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(glob_match("*-*", "profile-97"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("\\*", "*"));
    }
}
