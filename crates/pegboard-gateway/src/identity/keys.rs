//! The issuer's signing keys: fetched on first use, cached, refetched when a token names a key
//! the cache does not hold (a rotation at the IdP) at most once per `refetch_interval`, and in
//! the background once the set is older than `max_age` (so a withdrawn key stops being
//! trusted). A request never waits for the IdP longer than `fetch_timeout`: waiting for a
//! fetch another request started counts in the same bound. Only asymmetric keys of the allowed
//! algorithms are kept: an `oct` (shared secret) key in the set is ignored.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use tokio::sync::Mutex;
use url::Url;

use super::discovery;

/// How keys are fetched and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOptions {
    /// The longest a request waits for the IdP (metadata and keys together).
    pub fetch_timeout: Duration,
    /// An unknown `kid` triggers a refetch at most this often (every 10 s: a key rotated at the
    /// IdP is accepted within seconds on every replica, while tokens with made-up `kid`s cannot
    /// make the gateway hammer the IdP); the first fetch and the background refresh do not count.
    pub refetch_interval: Duration,
    /// After a failed fetch, the next is tried no sooner than this.
    pub retry_after_failure: Duration,
    /// A key set older than this is refreshed in the background on its next use.
    pub max_age: Duration,
}

impl Default for KeyOptions {
    /// 5 s per fetch, a refetch at most every 10 s, 5 s after a failure, a fresh set every hour.
    fn default() -> Self {
        Self {
            fetch_timeout: Duration::from_secs(5),
            refetch_interval: Duration::from_secs(10),
            retry_after_failure: Duration::from_secs(5),
            max_age: Duration::from_secs(3600),
        }
    }
}

/// The algorithms a token may be signed with: asymmetric only (never `none`, never `HS*`,
/// whose "secret" would be the public key anyone can fetch).
pub(crate) const ALLOWED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// One verification key.
pub(crate) struct VerifyKey {
    pub(crate) key: DecodingKey,
    /// The key's own `alg`, when the JWK names one: a token must use exactly that.
    alg: Option<Algorithm>,
}

impl VerifyKey {
    fn fits(&self, alg: Algorithm) -> bool {
        self.alg.is_none_or(|a| a == alg) && self.key.family() == alg.family()
    }
}

/// One fetched key set.
struct KeySet {
    by_kid: HashMap<String, Arc<VerifyKey>>,
    unnamed: Vec<Arc<VerifyKey>>,
    fetched: Instant,
}

impl KeySet {
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<VerifyKey>> {
        match kid {
            Some(kid) => self.by_kid.get(kid).filter(|k| k.fits(alg)).cloned(),
            // No `kid`: only when exactly one key could have signed it.
            None => {
                let mut fitting = self
                    .by_kid
                    .values()
                    .chain(&self.unnamed)
                    .filter(|k| k.fits(alg));
                match (fitting.next(), fitting.next()) {
                    (Some(one), None) => Some(Arc::clone(one)),
                    _ => None,
                }
            }
        }
    }
}

/// Why no key was found for a token.
#[derive(Debug)]
pub(crate) enum KeyError {
    /// The set (fresh enough) has no such key: the token is not the issuer's.
    Unknown,
    /// The keys could not be fetched.
    Unavailable(String),
}

struct FetchState {
    jwks_uri: Option<Url>,
    /// The last fetch of any kind (first, refetch, background).
    last_attempt: Option<Instant>,
    /// The last fetch for an unknown `kid`.
    last_refetch: Option<Instant>,
    last_failed: bool,
    last_error: String,
}

/// The issuer's keys, shared by every request.
pub(crate) struct KeyCache {
    issuer: String,
    http: reqwest::Client,
    options: KeyOptions,
    keys: ArcSwapOption<KeySet>,
    fetch: Arc<Mutex<FetchState>>,
    fetches: AtomicU64,
}

impl KeyCache {
    pub(crate) fn new(issuer: String, http: reqwest::Client, options: KeyOptions) -> Arc<Self> {
        Arc::new(Self {
            issuer,
            http,
            options,
            keys: ArcSwapOption::empty(),
            fetch: Arc::new(Mutex::new(FetchState {
                jwks_uri: None,
                last_attempt: None,
                last_refetch: None,
                last_failed: false,
                last_error: String::new(),
            })),
            fetches: AtomicU64::new(0),
        })
    }

    /// Key sets fetched so far (successful or not).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The key for a token's `kid` and `alg`.
    pub(crate) async fn key(
        self: &Arc<Self>,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Arc<VerifyKey>, KeyError> {
        let seen = self.keys.load_full();
        if let Some(set) = &seen
            && let Some(key) = set.find(kid, alg)
        {
            if set.fetched.elapsed() > self.options.max_age {
                self.refresh_in_background();
            }
            return Ok(key);
        }
        match tokio::time::timeout(self.options.fetch_timeout, self.refetch(seen, kid, alg)).await {
            Ok(found) => found,
            Err(_) => Err(KeyError::Unavailable(format!(
                "the issuer's keys did not arrive within {} s",
                self.options.fetch_timeout.as_secs_f64()
            ))),
        }
    }

    /// Fetch the set for a key not in `seen`: the first fetch, or a refetch for an unknown
    /// `kid`; not when another request just fetched, nor sooner than `retry_after_failure`
    /// after a failure or `refetch_interval` after the last refetch.
    async fn refetch(
        &self,
        seen: Option<Arc<KeySet>>,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Arc<VerifyKey>, KeyError> {
        let mut state = self.fetch.lock().await;
        let now = self.keys.load_full();
        let changed = match (&seen, &now) {
            (Some(a), Some(b)) => !Arc::ptr_eq(a, b),
            (None, Some(_)) => true,
            _ => false,
        };
        if changed && let Some(set) = &now {
            // Fetched while this request waited for the lock: that set is the freshest there is.
            return set.find(kid, alg).ok_or(KeyError::Unknown);
        }
        let recently = |at: Option<Instant>, wait: Duration| at.is_some_and(|t| t.elapsed() < wait);
        if state.last_failed && recently(state.last_attempt, self.options.retry_after_failure) {
            return Err(match now {
                Some(_) => KeyError::Unknown,
                None => KeyError::Unavailable(state.last_error.clone()),
            });
        }
        if now.is_some() {
            // A key the set does not hold: the IdP may have rotated. Ask again, but not more
            // than once per `refetch_interval` (tokens with made-up `kid`s must not make the
            // gateway hammer the IdP).
            if recently(state.last_refetch, self.options.refetch_interval) {
                return Err(KeyError::Unknown);
            }
            state.last_refetch = Some(Instant::now());
        }
        self.fetch_now(&mut state).await?;
        self.keys
            .load()
            .as_ref()
            .and_then(|set| set.find(kid, alg))
            .ok_or(KeyError::Unknown)
    }

    /// Fetch the key set (discovering its URL first if needed) and store it.
    async fn fetch_now(&self, state: &mut FetchState) -> Result<(), KeyError> {
        state.last_attempt = Some(Instant::now());
        // Counted as failed until it succeeds: a fetch cut short by a timeout is a failure.
        state.last_failed = true;
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let result = self.fetch_set(state).await;
        match result {
            Ok(set) => {
                tracing::debug!(
                    issuer = %self.issuer,
                    keys = set.by_kid.len() + set.unnamed.len(),
                    "fetched the issuer's signing keys"
                );
                self.keys.store(Some(Arc::new(set)));
                state.last_failed = false;
                Ok(())
            }
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, "cannot fetch the issuer's signing keys: {e}");
                // The URL may have moved: discover it again next time.
                state.jwks_uri = None;
                state.last_error = e.clone();
                Err(KeyError::Unavailable(e))
            }
        }
    }

    async fn fetch_set(&self, state: &mut FetchState) -> Result<KeySet, String> {
        let uri = match &state.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let uri = discovery::jwks_uri(&self.http, &self.issuer).await?;
                state.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let doc = discovery::get_json(&self.http, &uri)
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{uri} is not a JWK set (no `keys` list)"))?;
        let mut set = KeySet {
            by_kid: HashMap::new(),
            unnamed: Vec::new(),
            fetched: Instant::now(),
        };
        for raw in keys {
            match verify_key(raw) {
                Ok((kid, key)) => match kid {
                    Some(kid) => {
                        set.by_kid.insert(kid, Arc::new(key));
                    }
                    None => set.unnamed.push(Arc::new(key)),
                },
                Err(why) => {
                    tracing::debug!(issuer = %self.issuer, "a key of the set is skipped: {why}")
                }
            }
        }
        if set.by_kid.is_empty() && set.unnamed.is_empty() {
            return Err(format!("{uri} holds no usable signing key"));
        }
        Ok(set)
    }

    fn refresh_in_background(self: &Arc<Self>) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(mut state) = Arc::clone(&self.fetch).try_lock_owned() else {
            return; // a fetch is under way
        };
        // A refresh that failed is tried again no sooner than `retry_after_failure`, however
        // many requests come meanwhile.
        if state
            .last_attempt
            .is_some_and(|t| t.elapsed() < self.options.retry_after_failure)
        {
            return;
        }
        let this = Arc::clone(self);
        handle.spawn(async move {
            let timeout = this.options.fetch_timeout;
            let _ = tokio::time::timeout(timeout, this.fetch_now(&mut state)).await;
        });
    }
}

/// A JWK as a verification key, with its `kid`; or why it is not used.
fn verify_key(raw: &Value) -> Result<(Option<String>, VerifyKey), String> {
    let jwk: Jwk =
        serde_json::from_value(raw.clone()).map_err(|e| format!("unreadable JWK: {e}"))?;
    if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
        return Err("a shared-secret (`oct`) key is never used to verify tokens".into());
    }
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return Err("not a signing key (`use` is not `sig`)".into());
    }
    let alg = match jwk.common.key_algorithm {
        Some(a) => {
            let alg = Algorithm::try_from(a)
                .map_err(|_| format!("its `alg` {a} is not a signature algorithm"))?;
            if !ALLOWED.contains(&alg) {
                return Err(format!("its `alg` {a} is not accepted"));
            }
            Some(alg)
        }
        None => None,
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unusable key: {e}"))?;
    Ok((jwk.common.key_id, VerifyKey { key, alg }))
}
