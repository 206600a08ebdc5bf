//! Spans of raw JSON: where a value serde borrowed from a line sits in that line, so the line can
//! be edited in place (an id or a name swapped) and the rest passed on unparsed.

use std::ops::Range;

/// Where `part` (a slice borrowed from `line`) is in `line`.
pub(crate) fn range_in(line: &[u8], part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
    start..start + part.len()
}

/// `line` with `at` replaced by `with`, and a newline.
pub(crate) fn replace(line: &[u8], at: Range<usize>, with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + with.len() + 1);
    out.extend_from_slice(&line[..at.start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&line[at.end..]);
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_part_is_found_and_replaced() {
        let line = br#"{"id":"abc","x":1}"#;
        let text = std::str::from_utf8(line).expect("utf-8");
        let at = range_in(line, &text[6..11]);
        assert_eq!(at, 6..11);
        assert_eq!(replace(line, at, b"7"), b"{\"id\":7,\"x\":1}\n".to_vec());
    }
}
