//! BERT's uncased WordPiece tokenizer, as the Hugging Face `tokenizers` library runs it for
//! all-MiniLM-L6-v2 (`BertNormalizer` with lowercase and accent stripping, `BertPreTokenizer`,
//! `WordPiece` with `##` continuations and at most 100 characters a word). The test fixture
//! `tests/fixtures/embed_cases.json` holds that library's ids for a set of texts.

use std::collections::HashMap;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// A word longer than this (in characters) is one `[UNK]`, as in the reference.
const MAX_WORD_CHARS: usize = 100;
const CONTINUATION: &str = "##";
/// Bytes of text read per token wanted, at most.
const MAX_BYTES_PER_TOKEN: usize = 16;

/// The vocabulary and the unknown token's id.
pub(crate) struct WordPiece {
    ids: HashMap<Box<str>, u32>,
    unk: u32,
    /// The longest token's length in bytes (`##` included): no longer piece can match.
    longest: usize,
}

impl WordPiece {
    /// A tokenizer over `vocab` (one token a line; its line number is its id).
    pub(crate) fn new(vocab: &str) -> Option<Self> {
        let ids: HashMap<Box<str>, u32> = (0u32..)
            .zip(vocab.lines())
            .map(|(id, token)| (Box::from(token), id))
            .collect();
        let unk = *ids.get("[UNK]")?;
        let longest = ids.keys().map(|t| t.len()).max().unwrap_or(0);
        Some(Self { ids, unk, longest })
    }

    /// The unknown token's id.
    pub(crate) fn unk(&self) -> u32 {
        self.unk
    }

    /// How many tokens the vocabulary holds.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The ids of `text`'s tokens (no `[CLS]`/`[SEP]`), at most `max` of them, passed to `out`.
    pub(crate) fn encode(&self, text: &str, max: usize, out: &mut Vec<u32>) {
        // A token is rarely longer than a few characters: past this many bytes the text cannot
        // be needed for `max` tokens, and a huge text costs no more than a long one.
        let text = cut(text, max.saturating_mul(MAX_BYTES_PER_TOKEN));
        let normalized = normalize(text);
        let mut piece = String::new();
        for word in pre_tokenize(&normalized) {
            if out.len() >= max {
                return;
            }
            self.word(word, &mut piece, out);
        }
        out.truncate(max);
    }

    /// Greedy longest-match-first; a word with a part not in the vocabulary is one `[UNK]`.
    fn word(&self, word: &str, piece: &mut String, out: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        let start_len = out.len();
        let mut start = 0;
        while start < word.len() {
            // Pieces longer than the longest token cannot match: start below that length.
            let room = self
                .longest
                .saturating_sub(if start > 0 { CONTINUATION.len() } else { 0 });
            let mut end = word.len().min(start + room);
            while end > start && !word.is_char_boundary(end) {
                end -= 1;
            }
            let mut found = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str(CONTINUATION);
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.ids.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end = prev_boundary(word, end, start);
            }
            match found {
                Some(id) => out.push(id),
                None => {
                    out.truncate(start_len);
                    out.push(self.unk);
                    return;
                }
            }
            start = end;
        }
    }
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The byte index of the character boundary before `end`, not below `floor`.
fn prev_boundary(text: &str, end: usize, floor: usize) -> usize {
    let mut i = end - 1;
    while i > floor && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `BertNormalizer`: drop control characters, whitespace to spaces, spaces around CJK
/// ideographs, accents stripped (NFD, then no non-spacing marks), lowercase.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let stripped: String = cleaned
        .nfd()
        .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
        .collect();
    stripped.to_lowercase()
}

/// `BertPreTokenizer`: split at whitespace (dropped) and around each punctuation character (kept).
fn pre_tokenize(text: &str) -> impl Iterator<Item = &str> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if is_whitespace(c) {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
        } else if is_punctuation(c) {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
            words.push(&text[i..i + c.len_utf8()]);
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    words.into_iter()
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Categories Cc, Cf, Cn, Co (tab, newline and carriage return count as whitespace).
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Unassigned
            | GeneralCategory::PrivateUse
    )
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::OtherPunctuation
                | GeneralCategory::OpenPunctuation
        )
}

/// The CJK Unified Ideographs blocks BERT pads with spaces.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> WordPiece {
        WordPiece::new("[PAD]\n[UNK]\nun\n##aff\n##able\nrust\n,\n!").expect("vocab")
    }

    #[test]
    fn greedy_longest_match_with_continuations() {
        let mut out = Vec::new();
        tokenizer().encode("Unaffable, RUST!", 64, &mut out);
        assert_eq!(out, [2, 3, 4, 6, 5, 7]);
    }

    #[test]
    fn a_word_with_an_unknown_part_is_one_unk() {
        let mut out = Vec::new();
        tokenizer().encode("unaffablex rust", 64, &mut out);
        assert_eq!(out, [1, 5]);
    }

    #[test]
    fn at_most_max_ids() {
        let mut out = Vec::new();
        tokenizer().encode("rust rust rust rust", 2, &mut out);
        assert_eq!(out, [5, 5]);
    }

    #[test]
    fn a_vocabulary_without_unk_is_refused() {
        assert!(WordPiece::new("a\nb").is_none());
    }
}
