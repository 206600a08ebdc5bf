//! The store as the rest of the gateway sees it: which backend ([`Store::open`]), and one
//! server's entry in it ([`ServerStore`]): read, change under the entry's lock, watch for a login.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use tokio::sync::OnceCell;

use super::error::StoreError;
use super::file::FileStore;
use super::key::StoreKey;
use super::lock::{self, LockGuard};
use super::os_keyring::KeyringStore;
use super::paths;
use super::record::{CredentialRecord, now_epoch};
use crate::config::CredentialsBackend;

/// How often a server waiting for a login looks at its entry's lock file (one `stat`).
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// Where records are kept.
#[derive(Debug, Clone)]
enum Backend {
    File(FileStore),
    Keyring(KeyringStore),
    /// The fleet's store (`"credentials": "store"`).
    #[cfg(feature = "store")]
    Shared(super::in_store::InStore),
}

/// An entry's lock, held by a refresh from reading the refresh token to storing the rotated
/// one: a lock file here, or a lock in the fleet's store.
// Held for what dropping it does (the lock is given back); never read.
#[allow(dead_code)]
#[derive(Debug)]
pub(crate) enum EntryLock {
    /// The entry's lock file (`flock`).
    File(LockGuard),
    /// The entry's lock in the store.
    #[cfg(feature = "store")]
    Shared(super::in_store::StoreLock),
}

/// The credential store of this user.
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
    /// The data folder: the file store and every lock file live here.
    dir: PathBuf,
}

/// Whether the OS keyring answered, asked once per process.
static KEYRING_ANSWERS: OnceCell<Result<(), String>> = OnceCell::const_new();

async fn keyring_answers() -> Result<(), String> {
    KEYRING_ANSWERS
        .get_or_init(|| async {
            tokio::task::spawn_blocking(KeyringStore::answers)
                .await
                .unwrap_or_else(|e| Err(e.to_string()))
        })
        .await
        .clone()
}

impl Store {
    /// The store `choice` names: the OS keyring, the file, or (`Auto`) the keyring when one
    /// answers and the file otherwise.
    ///
    /// # Errors
    /// No data folder, or `Keyring` was asked for and none answers.
    pub async fn open(choice: CredentialsBackend) -> Result<Self, StoreError> {
        if choice == CredentialsBackend::Store {
            // No folder of this machine is used: the store holds the records and the locks.
            #[cfg(feature = "store")]
            return Ok(Self {
                backend: Backend::Shared(super::in_store::opened()?),
                dir: PathBuf::new(),
            });
            #[cfg(not(feature = "store"))]
            return Err(StoreError::NoStore);
        }
        let dir = paths::data_dir()?;
        let backend = match choice {
            CredentialsBackend::File => Backend::File(FileStore::new(dir.clone())),
            CredentialsBackend::Keyring => {
                keyring_answers().await.map_err(StoreError::NoKeyring)?;
                Backend::Keyring(KeyringStore)
            }
            CredentialsBackend::Auto | CredentialsBackend::Store => match keyring_answers().await {
                Ok(()) => Backend::Keyring(KeyringStore),
                Err(why) => {
                    tracing::debug!("no OS keyring ({why}); credentials go to a file");
                    Backend::File(FileStore::new(dir.clone()))
                }
            },
        };
        Ok(Self { backend, dir })
    }

    /// The store of files in `dir` (for tests and embedders that choose the folder).
    #[cfg(any(test, feature = "testing"))]
    pub fn file_in(dir: PathBuf) -> Self {
        Self {
            backend: Backend::File(FileStore::new(dir.clone())),
            dir,
        }
    }

    /// The credentials kept in `store` (for the tests).
    #[cfg(all(feature = "store", any(test, feature = "testing")))]
    pub(crate) fn in_store(store: super::in_store::InStore) -> Self {
        Self {
            backend: Backend::Shared(store),
            dir: PathBuf::new(),
        }
    }

    /// Where credentials go, for messages: "the OS keyring", the file's path, or the store.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::File(file) => format!("`{}`", file.path().display()),
            Backend::Keyring(_) => "the OS keyring".to_string(),
            #[cfg(feature = "store")]
            Backend::Shared(shared) => shared.describe(),
        }
    }

    /// The entry of the server and client `key`.
    pub fn server(&self, key: StoreKey) -> ServerStore {
        let lock_path = self
            .dir
            .join("locks")
            .join(format!("{}.lock", key.digest()));
        ServerStore {
            backend: self.backend.clone(),
            dir: self.dir.clone(),
            lock_path,
            key,
        }
    }
}

/// One server's entry: its record and the lock around changing it.
#[derive(Debug, Clone)]
pub struct ServerStore {
    backend: Backend,
    dir: PathBuf,
    lock_path: PathBuf,
    key: StoreKey,
}

impl ServerStore {
    /// The entry's key.
    pub fn key(&self) -> &StoreKey {
        &self.key
    }

    /// The record, if any.
    ///
    /// # Errors
    /// The store cannot be read (a corrupt file is reported, never overwritten).
    pub async fn load(&self) -> Result<Option<CredentialRecord>, StoreError> {
        let backend = self.backend.clone();
        let account = self.key.account();
        match backend {
            #[cfg(feature = "store")]
            Backend::Shared(shared) => shared.load(&self.key.digest()).await,
            Backend::File(file) => blocking(move || file.load(&account)).await,
            Backend::Keyring(keyring) => blocking(move || keyring.load(&account)).await,
        }
    }

    /// Take the entry's lock (waiting for another holder, in this process or another).
    ///
    /// # Errors
    /// The lock file cannot be created.
    pub(crate) async fn lock(&self) -> Result<EntryLock, StoreError> {
        #[cfg(feature = "store")]
        if let Backend::Shared(shared) = &self.backend {
            return shared.lock(&self.key.digest()).await.map(EntryLock::Shared);
        }
        let locks = self.dir.join("locks");
        blocking(move || {
            paths::private_dir(&locks)?;
            Ok(())
        })
        .await?;
        LockGuard::acquire_async(self.lock_path.clone())
            .await
            .map(EntryLock::File)
    }

    /// Write (`Some`) or delete (`None`) the record. The caller holds [`lock`](Self::lock).
    ///
    /// # Errors
    /// The store cannot be written; nothing changed then.
    pub async fn put_locked(&self, record: Option<CredentialRecord>) -> Result<(), StoreError> {
        #[cfg(feature = "store")]
        if let Backend::Shared(shared) = &self.backend {
            let record = record.map(|mut r| {
                r.saved_at = now_epoch();
                r
            });
            return shared.put(&self.key.digest(), record.as_ref()).await;
        }
        let backend = self.backend.clone();
        let account = self.key.account();
        let dir = self.dir.clone();
        let lock_path = self.lock_path.clone();
        blocking(move || {
            paths::private_dir(&dir)?;
            let record = record.map(|mut r| {
                r.saved_at = now_epoch();
                r
            });
            match backend {
                Backend::File(file) => file.put(&account, record)?,
                Backend::Keyring(keyring) => keyring.put(&account, record)?,
                #[cfg(feature = "store")]
                Backend::Shared(_) => {}
            }
            stamp(&lock_path)
        })
        .await
    }

    /// Change the record under the entry's lock: `change` gets what is stored now and returns
    /// what to store (`None`: delete). Returns what was stored before.
    ///
    /// # Errors
    /// The store cannot be read or written; nothing changed then.
    pub async fn update(
        &self,
        change: impl FnOnce(Option<CredentialRecord>) -> Option<CredentialRecord> + Send + 'static,
    ) -> Result<Option<CredentialRecord>, StoreError> {
        let _guard = self.lock().await?;
        let before = self.load().await?;
        self.put_locked(change(before.clone())).await?;
        Ok(before)
    }

    /// When the entry last changed in any process (`None`: never written here, or kept in
    /// the fleet's store, which has no such mark: read it again to know).
    pub fn changed_at(&self) -> Option<SystemTime> {
        #[cfg(feature = "store")]
        if let Backend::Shared(_) = &self.backend {
            return None;
        }
        lock::changed_at(&self.lock_path)
    }

    /// Whether the entry is kept in the fleet's store (no change mark: it is read again).
    fn shared(&self) -> bool {
        #[cfg(feature = "store")]
        if let Backend::Shared(_) = &self.backend {
            return true;
        }
        false
    }

    /// Wait until the stored record satisfies `ready` (a login completed, in this process or
    /// another), looking again each time the entry changes. Store errors are logged and waited
    /// out.
    pub async fn wait_for(&self, ready: impl Fn(&CredentialRecord) -> bool) -> CredentialRecord {
        let mut seen: Option<Option<SystemTime>> = None;
        loop {
            let now = self.changed_at();
            if seen != Some(now) || self.shared() {
                seen = Some(now);
                match self.load().await {
                    Ok(Some(record)) if ready(&record) => return record,
                    Ok(_) => {}
                    Err(e) => tracing::warn!("waiting for a login: {e}"),
                }
            }
            tokio::time::sleep(WATCH_EVERY).await;
        }
    }
}

/// Move the lock file's modification time: the entry changed.
fn stamp(lock_path: &std::path::Path) -> Result<(), StoreError> {
    if let Some(dir) = lock_path.parent() {
        paths::private_dir(dir)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path)
        .map_err(|e| StoreError::io(lock_path, e))?;
    file.set_modified(SystemTime::now())
        .map_err(|e| StoreError::io(lock_path, e))
}

async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}
