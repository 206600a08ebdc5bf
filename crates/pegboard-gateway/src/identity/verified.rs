//! JWTs already validated, so that a client's next requests with the same token cost one hash
//! and one map lookup instead of a signature check: keyed by the token's SHA-256 (computed for
//! the static-token check anyway), kept until the token's `exp` (plus the leeway), bounded in
//! size (full: emptied, then filled again by the tokens in use).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use foldhash::fast::RandomState;

/// Tokens remembered at most.
const CAPACITY: usize = 4096;

/// Validated tokens: digest -> (client index, expiry in Unix seconds, leeway included).
#[derive(Debug, Default)]
pub(crate) struct Verified {
    tokens: Mutex<HashMap<[u8; 32], (usize, u64), RandomState>>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Verified {
    /// The client index of a token validated before and not expired since.
    pub(crate) fn get(&self, digest: &[u8; 32]) -> Option<usize> {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        match tokens.get(digest) {
            Some(&(client, until)) if now() < until => Some(client),
            Some(_) => {
                tokens.remove(digest);
                None
            }
            None => None,
        }
    }

    /// Remember a token validated now for `client`, valid until `until` (Unix seconds).
    pub(crate) fn insert(&self, digest: [u8; 32], client: usize, until: u64) {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        if tokens.len() >= CAPACITY {
            tokens.clear();
        }
        tokens.insert(digest, (client, until));
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_remembered_until_it_expires() {
        let v = Verified::default();
        v.insert([1; 32], 3, now() + 100);
        v.insert([2; 32], 4, now() - 1);
        assert_eq!(v.get(&[1; 32]), Some(3));
        assert_eq!(v.get(&[2; 32]), None, "expired");
        assert_eq!(v.get(&[9; 32]), None);
        assert_eq!(v.len(), 1, "the expired one is forgotten");
    }

    #[test]
    fn the_cache_never_grows_past_its_capacity() {
        let v = Verified::default();
        for i in 0..(CAPACITY + 10) {
            let mut d = [0u8; 32];
            d[..8].copy_from_slice(&(i as u64).to_le_bytes());
            v.insert(d, 0, now() + 100);
        }
        assert!(v.len() <= CAPACITY);
    }
}
