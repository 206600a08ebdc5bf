//! rmcp's [`CredentialStore`] over one server's entry: what rmcp's `AuthorizationManager`
//! reads and writes during a login and a refresh.
//!
//! A refresh runs under the entry's lock ([`CredentialStore::acquire_refresh_guard`]): the
//! manager takes it, reads the stored refresh token (the newest, whichever process wrote it),
//! spends it, stores the rotated one and only then lets go. So two processes sharing the store
//! never spend the same refresh token.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

use super::error::StoreError;
use super::record::{ClientRegistration, CredentialRecord, RegistrationKind};
use super::store::{EntryLock, ServerStore};

/// Why a refreshed-out record needs a new login, as stored.
pub const REFUSED: &str = "the authorization server refused the stored refresh token";

/// rmcp's view of one server's entry, for the client set with [`RmcpStore::set_client`].
#[derive(Clone)]
pub struct RmcpStore {
    inner: Arc<Inner>,
}

struct Inner {
    store: ServerStore,
    client: Mutex<Option<ClientRegistration>>,
    metadata: Mutex<Option<AuthorizationMetadata>>,
    /// The refresh guard is held: writes must not take the entry's lock again.
    guarded: Arc<AtomicBool>,
    /// The keeper holds the entry's lock around a whole refresh ([`RmcpStore::lock_for_refresh`]):
    /// rmcp's refresh inside it must not take it again.
    held_around: Arc<AtomicBool>,
}

/// The entry's lock held by a refresh; clears the flags when dropped.
pub(crate) struct HeldLock {
    _lock: EntryLock,
    guarded: Arc<AtomicBool>,
    around: Option<Arc<AtomicBool>>,
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        self.guarded.store(false, Ordering::SeqCst);
        if let Some(around) = &self.around {
            around.store(false, Ordering::SeqCst);
        }
    }
}

fn store_error(e: &StoreError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

impl RmcpStore {
    /// rmcp's view of `store`.
    pub fn new(store: ServerStore) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                client: Mutex::new(None),
                metadata: Mutex::new(None),
                guarded: Arc::new(AtomicBool::new(false)),
                held_around: Arc::new(AtomicBool::new(false)),
            }),
        }
    }

    /// Take the entry's lock for a whole refresh: the caller reads the store again under it
    /// (another process may have refreshed meanwhile: then it takes that token and spends
    /// nothing) and only then has rmcp refresh, which does not take the lock again. Held until
    /// the returned guard is dropped. So of several processes due at once, exactly one spends
    /// the refresh token and the others read the rotated one.
    ///
    /// # Errors
    /// The lock cannot be taken (the store cannot be reached).
    pub(crate) async fn lock_for_refresh(&self) -> Result<HeldLock, StoreError> {
        let lock = self.inner.store.lock().await?;
        self.inner.guarded.store(true, Ordering::SeqCst);
        self.inner.held_around.store(true, Ordering::SeqCst);
        Ok(HeldLock {
            _lock: lock,
            guarded: self.inner.guarded.clone(),
            around: Some(self.inner.held_around.clone()),
        })
    }

    /// The client whose tokens are read and written (tokens of another client are not read).
    pub fn set_client(&self, client: ClientRegistration) {
        *self
            .inner
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(client);
    }

    /// The authorization server metadata stored with the next tokens.
    pub fn set_metadata(&self, metadata: AuthorizationMetadata) {
        *self
            .inner
            .metadata
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(metadata);
    }

    fn client(&self) -> Option<ClientRegistration> {
        self.inner
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The entry underneath.
    pub fn server_store(&self) -> &ServerStore {
        &self.inner.store
    }

    /// Change the record, under the entry's lock unless a refresh holds it already.
    async fn write(
        &self,
        change: impl FnOnce(Option<CredentialRecord>) -> Option<CredentialRecord> + Send + 'static,
    ) -> Result<(), AuthError> {
        let store = &self.inner.store;
        if self.inner.guarded.load(Ordering::SeqCst) {
            let before = store.load().await.map_err(|e| store_error(&e))?;
            store
                .put_locked(change(before))
                .await
                .map_err(|e| store_error(&e))
        } else {
            store
                .update(change)
                .await
                .map(drop)
                .map_err(|e| store_error(&e))
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for RmcpStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(client) = self.client() else {
            return Ok(None);
        };
        let record = self.inner.store.load().await.map_err(|e| store_error(&e))?;
        Ok(record
            .filter(|r| r.client.client_id == client.client_id)
            .and_then(|r| r.usable_tokens().cloned()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let client = self.client().ok_or_else(|| {
            AuthError::CredentialStoreError("no client registration to store tokens for".into())
        })?;
        let metadata = self
            .inner
            .metadata
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let url = self.inner.store.key().url().to_string();
        // A configured client's secret stays in the config (which may change it), not here.
        let mut client = client;
        if client.kind == RegistrationKind::Preregistered {
            client.client_secret = None;
        }
        self.write(move |before| {
            let mut record = before
                .filter(|r| r.client.client_id == client.client_id)
                .unwrap_or_else(|| CredentialRecord::new(&url, client.clone()));
            record.client = client;
            if metadata.is_some() {
                record.metadata = metadata;
            }
            record.tokens = Some(credentials);
            record.refused = None;
            Some(record)
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.write(|before| {
            before.map(|mut r| {
                r.tokens = None;
                r
            })
        })
        .await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let spent = refresh_token_of(credentials);
        self.write(move |before| {
            before.map(|mut r| {
                // Only the token that was refused: one stored since by another process stays.
                let stored = r.tokens.as_ref().and_then(refresh_token_of);
                if stored.is_some() && stored == spent {
                    r.refused = Some(REFUSED.to_string());
                }
                r
            })
        })
        .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        if self.inner.held_around.load(Ordering::SeqCst) {
            // The keeper holds the lock around this refresh already.
            return Ok(None);
        }
        let lock = self.inner.store.lock().await.map_err(|e| store_error(&e))?;
        self.inner.guarded.store(true, Ordering::SeqCst);
        Ok(Some(CredentialRefreshGuard::new(HeldLock {
            _lock: lock,
            guarded: self.inner.guarded.clone(),
            around: None,
        })))
    }
}

fn refresh_token_of(credentials: &StoredCredentials) -> Option<String> {
    credentials
        .token_response
        .as_ref()?
        .refresh_token()
        .map(|t| t.secret().clone())
}
