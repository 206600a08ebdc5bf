//! The key that seals credentials kept in the store (`"credentials": "store"`): an AEAD
//! (ChaCha20-Poly1305, RFC 8439, RustCrypto's) under 32 bytes from `PEGBOARD_STORE_KEY`, which
//! never goes to the store. Each record is sealed with a random nonce and its own key in the
//! store as associated data, so a record copied under another entry's key does not open.
//!
//! A sealed record is `pb1` (the format), the 12-byte nonce, then the ciphertext and its tag.

use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

/// The environment variable that holds the key.
pub const KEY_VAR: &str = "PEGBOARD_STORE_KEY";

/// The sealed format's first bytes.
const MAGIC: &[u8] = b"pb1";
/// ChaCha20-Poly1305's nonce.
const NONCE_LEN: usize = 12;

/// Why the key cannot be used, or a record cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// No key in the environment.
    #[error(
        "`\"credentials\": \"store\"` keeps upstream credentials in the store, encrypted with the \
         key in {KEY_VAR}, which is not set; set it to 32 random bytes, base64 or hex (make one \
         with `openssl rand -base64 32`), the same on every replica and for `pegboard login`"
    )]
    Missing,
    /// The key is not base64 or hex.
    #[error(
        "{KEY_VAR} must be 32 bytes written in base64 (44 characters) or hex (64 characters); \
         what is set is neither (make one with `openssl rand -base64 32`)"
    )]
    Malformed,
    /// The key decodes to another length.
    #[error(
        "{KEY_VAR} decodes to {0} bytes; it must be 32 (make one with `openssl rand -base64 32`)"
    )]
    Length(usize),
    /// A record does not open with this key.
    #[error(
        "the credentials stored under {0} do not open with the key in {KEY_VAR}: it is not the \
         key they were stored with (every replica and `pegboard login` need the same key), or \
         the entry was changed by something else; log in again with `pegboard login` to replace \
         them"
    )]
    WrongKey(String),
}

/// The key (its bytes are never printed, not even by `Debug`).
#[derive(Clone)]
pub struct SealKey {
    cipher: ChaCha20Poly1305,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey([redacted])")
    }
}

impl SealKey {
    /// The key in [`KEY_VAR`].
    ///
    /// # Errors
    /// [`SealError::Missing`], [`SealError::Malformed`] or [`SealError::Length`].
    pub fn from_env() -> Result<Self, SealError> {
        match std::env::var(KEY_VAR) {
            Ok(text) if !text.trim().is_empty() => Self::parse(&text),
            _ => Err(SealError::Missing),
        }
    }

    /// The key written as `text`: 64 hex digits, or base64 (standard or URL-safe, padded or
    /// not) of 32 bytes.
    ///
    /// # Errors
    /// [`SealError::Malformed`] or [`SealError::Length`].
    pub fn parse(text: &str) -> Result<Self, SealError> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(text).map_err(|_| SealError::Malformed)?
        } else {
            let trimmed = text.trim_end_matches('=');
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(trimmed)
                .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(trimmed))
                .map_err(|_| SealError::Malformed)?
        };
        if bytes.len() != 32 {
            return Err(SealError::Length(bytes.len()));
        }
        Ok(Self {
            cipher: ChaCha20Poly1305::new(Key::from_slice(&bytes)),
        })
    }

    /// `plain` sealed for the entry `aad` (its key in the store).
    pub fn seal(&self, aad: &str, plain: &[u8]) -> Vec<u8> {
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let mut out = Vec::with_capacity(MAGIC.len() + NONCE_LEN + plain.len() + 16);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&nonce);
        // Encryption fails only for a message over 256 GiB; a record is a few KiB.
        if let Ok(sealed) = self.cipher.encrypt(
            &nonce,
            Payload {
                msg: plain,
                aad: aad.as_bytes(),
            },
        ) {
            out.extend_from_slice(&sealed);
        }
        out
    }

    /// What [`SealKey::seal`] sealed for the entry `aad`.
    ///
    /// # Errors
    /// [`SealError::WrongKey`]: another key, another entry, or changed bytes.
    pub fn open(&self, aad: &str, sealed: &[u8]) -> Result<Vec<u8>, SealError> {
        let wrong = || SealError::WrongKey(aad.to_string());
        let rest = sealed.strip_prefix(MAGIC).ok_or_else(wrong)?;
        if rest.len() < NONCE_LEN {
            return Err(wrong());
        }
        let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
        self.cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| wrong())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    #[test]
    fn hex_and_base64_of_the_same_bytes_are_the_same_key() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(hex::decode(HEX).unwrap());
        let sealed = SealKey::parse(HEX).unwrap().seal("k", b"secret");
        assert_eq!(
            SealKey::parse(&b64).unwrap().open("k", &sealed).unwrap(),
            b"secret"
        );
        let url_safe =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(hex::decode(HEX).unwrap());
        assert_eq!(
            SealKey::parse(&url_safe)
                .unwrap()
                .open("k", &sealed)
                .unwrap(),
            b"secret"
        );
    }

    #[test]
    fn a_short_or_malformed_key_is_refused_with_what_to_do() {
        let short = SealKey::parse("c2hvcnQ=").unwrap_err();
        assert_eq!(short, SealError::Length(5));
        assert!(short.to_string().contains("must be 32"), "{short}");
        let bad = SealKey::parse("not a key!").unwrap_err();
        assert_eq!(bad, SealError::Malformed);
        assert!(bad.to_string().contains("openssl rand -base64 32"), "{bad}");
    }

    #[test]
    fn another_key_another_entry_or_a_changed_byte_does_not_open() {
        let key = SealKey::parse(HEX).unwrap();
        let sealed = key.seal("entry-a", b"{\"token\":\"t\"}");
        assert!(
            !sealed.windows(5).any(|w| w == b"token"),
            "the plaintext shows"
        );
        let other = SealKey::parse(&"ab".repeat(32)).unwrap();
        assert!(matches!(
            other.open("entry-a", &sealed),
            Err(SealError::WrongKey(_))
        ));
        assert!(key.open("entry-b", &sealed).is_err());
        let mut changed = sealed.clone();
        let last = changed.len() - 1;
        changed[last] ^= 1;
        assert!(key.open("entry-a", &changed).is_err());
        assert!(key.open("entry-a", b"pb1").is_err());
        assert_eq!(key.open("entry-a", &sealed).unwrap(), b"{\"token\":\"t\"}");
    }

    #[test]
    fn each_seal_has_its_own_nonce() {
        let key = SealKey::parse(HEX).unwrap();
        assert_ne!(key.seal("k", b"same"), key.seal("k", b"same"));
    }
}
