//! Random inputs must never panic, hang or overflow the stack.

use super::parse_as;
use crate::Origin;

/// A tiny xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const ALPHABET: &[u8] = b" \n\t{}()[]/;,*:.-+=<>!&|^~?'\"#$@`\\abcxyzBEGINint0123456789";

const PIECES: &[&str] = &[
    "BEGIN",
    "syscall::read:entry",
    "profile-997",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "/",
    ";",
    ",",
    "x",
    "self",
    "->",
    "this",
    "@a",
    "@",
    "=",
    "+=",
    "==",
    "?",
    ":",
    "int",
    "uint64_t",
    "struct",
    "union",
    "enum",
    "typedef",
    "inline",
    "translator",
    "provider",
    "sizeof",
    "stringof",
    "offsetof",
    "xlate",
    "<",
    ">",
    "*",
    "&",
    "-",
    "++",
    "!",
    "~",
    "^^",
    "1",
    "0x1f",
    "'a'",
    "\"s\"",
    "$1",
    "$target",
    "`sym",
    "if",
    "else",
    "\n#pragma D option quiet\n",
    "\n# 3 \"f\"\n",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "...",
    "'",
    "\"",
    "string",
    "char",
    "long",
    "unsigned",
    ".",
];

fn check(text: &str) {
    for origin in [Origin::Description, Origin::Script("f.d".into())] {
        let _ = parse_as(origin, text);
    }
}

#[test]
fn random_bytes_do_not_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let len = rng.below(64);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                // Mostly printable ASCII, sometimes anything.
                if rng.below(8) == 0 {
                    rng.next() as u8
                } else {
                    ALPHABET[rng.below(ALPHABET.len())]
                }
            })
            .collect();
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn random_token_soups_do_not_panic() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..3000 {
        let len = rng.below(40);
        let text: String = (0..len)
            .map(|_| format!("{} ", PIECES[rng.below(PIECES.len())]))
            .collect();
        check(&text);
        // Clause-shaped soups reach deeper into the grammar.
        check(&format!("BEGIN {{ {text} }}"));
        check(&format!("BEGIN /{text}/ {{ }}"));
    }
}
