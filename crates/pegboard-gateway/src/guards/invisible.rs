//! Characters a person reading a description does not see but a model reads: zero-width and
//! other invisible format characters, Unicode "tag" characters (which spell ASCII invisibly:
//! "ASCII smuggling"), the variation selectors of the supplement (used to hide bytes after a
//! visible character), and the bidirectional controls that make text display in another order
//! than it is read ("Trojan Source", CVE-2021-42574), and the escape character of ANSI terminal
//! codes (which can hide text from a terminal, as Trail of Bits showed for MCP).
//!
//! A fixed list, not a Unicode property: `Cf` also holds characters that are ordinary in real
//! text (the Arabic number sign, the soft hyphen of hyphenated words is kept out for that reason
//! too). Emoji sequences joined by U+200D lose their joiner when stripped; they still read.

/// Why a character is flagged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// Zero-width or otherwise invisible: U+200B..U+200D, U+2060..U+2064, U+FEFF, U+180E,
    /// U+001B (the escape that starts ANSI terminal codes, which can conceal text),
    /// U+E0000..U+E007F (tags), U+E0100..U+E01EF (variation selectors supplement).
    Invisible,
    /// Changes the display order: U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C.
    Bidi,
}

/// Whether `c` is flagged, and why.
pub fn classify(c: char) -> Option<Hidden> {
    match c {
        '\u{200B}'..='\u{200D}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}'
        | '\u{180E}'
        | '\u{1B}'
        | '\u{E0000}'..='\u{E007F}'
        | '\u{E0100}'..='\u{E01EF}' => Some(Hidden::Invisible),
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Some(Hidden::Bidi),
        _ => None,
    }
}

/// Each run of flagged characters of one kind in `text`: its byte range and kind.
pub fn runs(text: &str) -> Vec<(std::ops::Range<usize>, Hidden)> {
    let mut out: Vec<(std::ops::Range<usize>, Hidden)> = Vec::new();
    for (at, c) in text.char_indices() {
        let Some(kind) = classify(c) else { continue };
        let end = at + c.len_utf8();
        match out.last_mut() {
            Some((range, last)) if range.end == at && *last == kind => range.end = end,
            _ => out.push((at..end, kind)),
        }
    }
    out
}

/// `text` without its flagged characters; `None` when it has none (nothing to copy).
pub fn strip(text: &str) -> Option<String> {
    if !text.chars().any(|c| classify(c).is_some()) {
        return None;
    }
    Some(text.chars().filter(|c| classify(*c).is_none()).collect())
}

/// `text` with flagged characters written as `\u{...}`, for a report a person can read.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if classify(c).is_some() {
            out.push_str(&format!("\\u{{{:X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The ASCII that Unicode tag characters spell (U+E0020..U+E007E), if `text` holds any: what a
/// model may read in them.
pub fn tag_text(text: &str) -> Option<String> {
    let spelled: String = text
        .chars()
        .filter_map(|c| {
            let code = u32::from(c);
            (0xE0020..=0xE007E)
                .contains(&code)
                .then(|| char::from_u32(code - 0xE0000))
                .flatten()
        })
        .collect();
    (!spelled.is_empty()).then_some(spelled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_width_and_bidi_are_found_in_runs_and_stripped() {
        let text = "Adds\u{200B}\u{200B} two\u{202E}txt.exe\u{202C} numbers";
        let found = runs(text);
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].1, Hidden::Invisible);
        assert_eq!(&text[found[0].0.clone()], "\u{200B}\u{200B}");
        assert_eq!(found[1].1, Hidden::Bidi);
        assert_eq!(strip(text).as_deref(), Some("Adds twotxt.exe numbers"));
        assert_eq!(strip("plain café ⚠️ text"), None);
        assert_eq!(escaped("a\u{200B}b"), "a\\u{200B}b");
    }

    #[test]
    fn tag_characters_spell_hidden_ascii() {
        let hidden: String = "ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + u32::from(c)).unwrap())
            .collect();
        let text = format!("Weather{hidden} lookup");
        assert_eq!(tag_text(&text).as_deref(), Some("ignore"));
        assert_eq!(strip(&text).as_deref(), Some("Weather lookup"));
        assert_eq!(tag_text("Weather"), None);
    }
}
