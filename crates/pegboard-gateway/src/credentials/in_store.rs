//! `"credentials": "store"`: upstream OAuth credentials kept in the fleet's store (`--store`),
//! so one `pegboard login NAME --store URL` serves every replica. Behind the cargo feature
//! `store`.
//!
//! Each entry is one key, `PREFIX:credentials:DIGEST`, holding the record sealed with the key
//! in `PEGBOARD_STORE_KEY` (see `seal.rs`; the key never goes to the store). A refresh holds
//! the entry's lock, `PREFIX:credentials-lock:DIGEST`, taken with `SET NX PX` and a random
//! token and given back by a script that deletes it only while it still holds that token: so
//! exactly one replica spends a rotating refresh token, and the others, who wait for the lock,
//! then read the rotated one. A lock whose holder died expires after [`LOCK_TTL`].

use std::sync::{LazyLock, RwLock};
use std::time::Duration;

use redis::Script;

use super::error::StoreError;
use super::record::CredentialRecord;
use super::seal::SealKey;
use crate::store::Store;

/// How long a refresh may hold an entry's lock before it expires by itself (a replica that
/// died holding it locks nobody out for longer).
pub(crate) const LOCK_TTL: Duration = Duration::from_secs(30);
/// The longest a replica waits for another's refresh to give the lock back.
const LOCK_WAIT: Duration = Duration::from_secs(45);
/// Between two tries of a held lock: from the first to the last.
const RETRY_FIRST: Duration = Duration::from_millis(20);
const RETRY_MAX: Duration = Duration::from_millis(250);

/// Delete the lock only while it holds this holder's token.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
",
    )
});

/// The store and the key of this process's credentials, when `"credentials": "store"` is used
/// (set by the gateway that opens a store, and by `pegboard login --store`).
static SHARED: RwLock<Option<InStore>> = RwLock::new(None);

/// Keep this process's `"credentials": "store"` credentials in `store`, sealed with the key in
/// `PEGBOARD_STORE_KEY`: read now, so a missing or short key is said at once.
///
/// # Errors
/// The key is missing or not 32 bytes.
pub(crate) fn use_store(store: Store) -> Result<(), StoreError> {
    let key = SealKey::from_env().map_err(StoreError::Seal)?;
    *SHARED
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(InStore { store, key });
    Ok(())
}

/// The credentials in the store set by [`use_store`].
///
/// # Errors
/// [`StoreError::NoStore`] when none was set.
pub(crate) fn opened() -> Result<InStore, StoreError> {
    SHARED
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .ok_or(StoreError::NoStore)
}

/// Credentials in the store.
#[derive(Debug, Clone)]
pub(crate) struct InStore {
    store: Store,
    key: SealKey,
}

/// An entry's lock, held in the store; given back when dropped (or expired after
/// [`LOCK_TTL`]).
#[derive(Debug)]
pub(crate) struct StoreLock {
    store: Store,
    key: String,
    token: String,
}

impl InStore {
    /// Credentials in `store`, sealed with `key` (tests; the gateway's come from [`use_store`]).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn new(store: Store, key: SealKey) -> Self {
        Self { store, key }
    }

    /// Where they are, for messages.
    pub(crate) fn describe(&self) -> String {
        format!("the store {}", self.store.url())
    }

    fn entry_key(&self, digest: &str) -> String {
        self.store.key("credentials", digest)
    }

    fn failed(e: &crate::store::StoreError) -> StoreError {
        StoreError::Shared(e.to_string())
    }

    /// The record of the entry `digest`.
    pub(crate) async fn load(&self, digest: &str) -> Result<Option<CredentialRecord>, StoreError> {
        let key = self.entry_key(digest);
        let mut connection = self.store.connection();
        let sealed: Option<Vec<u8>> = self
            .store
            .round_trip("reading upstream credentials", async {
                redis::cmd("GET")
                    .arg(&key)
                    .query_async(&mut connection)
                    .await
            })
            .await
            .map_err(|e| Self::failed(&e))?;
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let plain = self.key.open(&key, &sealed).map_err(StoreError::Seal)?;
        serde_json::from_slice(&plain).map(Some).map_err(|e| {
            StoreError::Shared(format!("the credentials under {key} are not a record: {e}"))
        })
    }

    /// Write (`Some`) or delete (`None`) the record of the entry `digest`.
    pub(crate) async fn put(
        &self,
        digest: &str,
        record: Option<&CredentialRecord>,
    ) -> Result<(), StoreError> {
        let key = self.entry_key(digest);
        let command = match record {
            Some(record) => {
                let plain = serde_json::to_vec(record)
                    .map_err(|e| StoreError::Shared(format!("cannot write a record: {e}")))?;
                let mut set = redis::cmd("SET");
                set.arg(&key).arg(self.key.seal(&key, &plain));
                set
            }
            None => {
                let mut del = redis::cmd("DEL");
                del.arg(&key);
                del
            }
        };
        let mut connection = self.store.connection();
        self.store
            .round_trip("writing upstream credentials", async {
                command.query_async::<()>(&mut connection).await
            })
            .await
            .map_err(|e| Self::failed(&e))
    }

    /// Take the lock of the entry `digest`, waiting while another replica holds it (at most
    /// [`LOCK_WAIT`]).
    ///
    /// # Errors
    /// The store cannot be reached, or the lock stayed held for [`LOCK_WAIT`].
    pub(crate) async fn lock(&self, digest: &str) -> Result<StoreLock, StoreError> {
        let key = self.store.key("credentials-lock", digest);
        let token = uuid::Uuid::new_v4().simple().to_string();
        let ttl_ms = u64::try_from(LOCK_TTL.as_millis()).unwrap_or(u64::MAX);
        let give_up = tokio::time::Instant::now() + LOCK_WAIT;
        let mut pause = RETRY_FIRST;
        loop {
            let mut connection = self.store.connection();
            let taken: Option<String> = self
                .store
                .round_trip("locking upstream credentials for a refresh", async {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(&token)
                        .arg("NX")
                        .arg("PX")
                        .arg(ttl_ms)
                        .query_async(&mut connection)
                        .await
                })
                .await
                .map_err(|e| Self::failed(&e))?;
            if taken.is_some() {
                return Ok(StoreLock {
                    store: self.store.clone(),
                    key,
                    token,
                });
            }
            if tokio::time::Instant::now() + pause > give_up {
                return Err(StoreError::Shared(format!(
                    "the lock {key} stayed held for {} s (another replica refreshing); try again",
                    LOCK_WAIT.as_secs()
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(RETRY_MAX);
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let (store, key, token) = (
            self.store.clone(),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.token),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let mut connection = store.connection();
                let mut invocation = RELEASE.key(&key);
                invocation.arg(&token);
                // Not given back (the store is down): it expires after LOCK_TTL.
                let _ = store
                    .round_trip("unlocking upstream credentials", async {
                        invocation.invoke_async::<i64>(&mut connection).await
                    })
                    .await;
            });
        }
    }
}
