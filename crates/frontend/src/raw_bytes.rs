//! D sources that are not UTF-8. D text is bytes: a string literal or a comment may hold any
//! byte (a script written in Latin-1, say), and DTrace takes it as it is. The front end works
//! on `str`, so [`decode`] carries each byte that is not part of valid UTF-8 as a private-use
//! character of its own (byte `b` as U+10FF00 + `b`), and [`carried`] turns such a character
//! back into its byte where string and character literals are decoded. A UTF-8 source is
//! left as it is.

/// The character carrying byte `b` (0x80 to 0xff) is `BASE + b`.
const BASE: u32 = 0x10_ff00;

/// `bytes` as text: UTF-8 as it is, every other byte carried by its private-use character.
pub fn decode(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| {
        let bytes = e.into_bytes();
        let mut text = String::with_capacity(bytes.len() * 2);
        for chunk in bytes.utf8_chunks() {
            text.push_str(chunk.valid());
            for &b in chunk.invalid() {
                text.push(char::from_u32(BASE + u32::from(b)).expect("a private-use character"));
            }
        }
        text
    })
}

/// `c` as a message shows it: a carried byte as U+FFFD, what a UTF-8 terminal shows for the
/// byte DTrace would print.
pub fn shown(c: char) -> char {
    match u32::from(c).checked_sub(BASE) {
        Some(0x80..=0xff) => char::REPLACEMENT_CHARACTER,
        _ => c,
    }
}

/// The byte carried by the character `text` starts with, if it is one of [`decode`]'s.
pub fn carried(text: &[u8]) -> Option<u8> {
    let head = text.get(..4)?;
    let c = std::str::from_utf8(head).ok()?.chars().next()?;
    let b = u32::from(c).checked_sub(BASE)?;
    u8::try_from(b).ok().filter(|b| *b >= 0x80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_utf8_come_back() {
        let text = decode(b"a\xe9\"\xc3\xa9\xff\xc3".to_vec());
        assert_eq!(text.chars().count(), 6);
        assert!(text.contains('\u{e9}'));
        let bytes = text.as_bytes();
        assert_eq!(carried(&bytes[1..]), Some(0xe9));
        assert_eq!(carried(bytes), None);
        let last = text.char_indices().last().unwrap().0;
        assert_eq!(carried(&bytes[last..]), Some(0xc3));
        assert_eq!(decode(b"plain".to_vec()), "plain");
        assert_eq!(
            text.chars().map(shown).collect::<String>(),
            "a\u{fffd}\"\u{e9}\u{fffd}\u{fffd}"
        );
    }
}
