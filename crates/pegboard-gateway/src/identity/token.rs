//! Static tokens, held only as SHA-256 digests and compared in constant time.
//!
//! The config gives a client's token as `${VAR}` or as the hex of its SHA-256 (so the file
//! holds no secret); either way only the digest is kept. A presented token is hashed once and
//! compared with every client's digest by [`subtle`], with no early exit, so the time taken
//! says nothing about how much of a digest matched.

use std::fmt;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The SHA-256 of a token. Its `Debug` never shows it.
#[derive(Clone, Copy)]
pub struct TokenDigest([u8; 32]);

impl TokenDigest {
    /// The digest of `token`.
    pub fn of(token: &str) -> Self {
        Self(Sha256::digest(token.as_bytes()).into())
    }

    /// A digest written as 64 hex digits (either case), as `sha256sum` prints it.
    ///
    /// # Errors
    /// What is wrong with the text: its length or a character that is not a hex digit.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let mut out = [0u8; 32];
        hex::decode_to_slice(text, &mut out).map_err(|e| match e {
            hex::FromHexError::InvalidHexCharacter { c, index } => format!(
                "has `{c}` at position {}: a SHA-256 in hex is 64 characters 0-9 and a-f \
                 (make one with `printf %s \"$TOKEN\" | sha256sum`)",
                index + 1
            ),
            _ => format!(
                "is {} characters long: a SHA-256 in hex is 64 characters 0-9 and a-f \
                 (make one with `printf %s \"$TOKEN\" | sha256sum`)",
                text.chars().count()
            ),
        })?;
        Ok(Self(out))
    }

    /// The digest's bytes (a map key for tokens already validated).
    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Whether both are the same digest, compared in constant time.
    pub fn matches(&self, other: &TokenDigest) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl PartialEq for TokenDigest {
    fn eq(&self, other: &Self) -> bool {
        self.matches(other)
    }
}

impl Eq for TokenDigest {}

impl fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenDigest(<redacted>)")
    }
}

/// The index of the first of `digests` equal to `presented`, every digest compared in full
/// (constant time per digest, no early exit over the list).
pub(crate) fn find(presented: &TokenDigest, digests: &[TokenDigest]) -> Option<usize> {
    let mut found = None;
    for (i, d) in digests.iter().enumerate() {
        let hit = presented.matches(d);
        if hit && found.is_none() {
            found = Some(i);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_matches_its_hex_digest_in_either_case() {
        let hex = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08";
        assert!(TokenDigest::of("test").matches(&TokenDigest::from_hex(hex).unwrap()));
        assert!(!TokenDigest::of("test2").matches(&TokenDigest::from_hex(hex).unwrap()));
    }

    #[test]
    fn malformed_hex_says_what_is_wrong() {
        let short = TokenDigest::from_hex("abcd").unwrap_err();
        assert!(short.contains("4 characters long"), "{short}");
        let bad = format!("{}g", "a".repeat(63));
        let e = TokenDigest::from_hex(&bad).unwrap_err();
        assert!(e.contains("`g` at position 64"), "{e}");
    }

    #[test]
    fn debug_never_shows_the_digest() {
        let d = TokenDigest::of("secret");
        let shown = format!("{d:?}");
        assert!(!shown.contains(&hex::encode(d.0)[..8]), "{shown}");
        assert_eq!(shown, "TokenDigest(<redacted>)");
    }

    #[test]
    fn find_returns_the_first_match_after_comparing_all() {
        let list = [
            TokenDigest::of("a"),
            TokenDigest::of("b"),
            TokenDigest::of("b"),
        ];
        assert_eq!(find(&TokenDigest::of("b"), &list), Some(1));
        assert_eq!(find(&TokenDigest::of("c"), &list), None);
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn of() {
        use crate::identity::token::TokenDigest;
        let hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert!(TokenDigest::of("test").matches(&TokenDigest::from_hex(hex).unwrap()));
    }
}
