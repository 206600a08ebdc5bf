//! The OS keyring: macOS Keychain, Windows Credential Manager, or the Secret Service over D-Bus
//! (crate `keyring`; Linux's kernel keyring is never used: it forgets everything at reboot).
//! One keyring item per server and client, service `pegboard`, account [`super::StoreKey::account`],
//! holding the record as JSON. Every call blocks (D-Bus round trips): call from a blocking thread.

use std::sync::mpsc;
use std::time::Duration;

use super::error::StoreError;
use super::record::CredentialRecord;

/// How long the OS keyring gets to answer the first question of a process.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The keyring items' service name.
pub const SERVICE: &str = "pegboard";

/// The account used to ask whether a keyring answers at all.
const PROBE_ACCOUNT: &str = "pegboard probe";

/// The OS keyring.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyringStore;

pub(super) fn entry(account: &str) -> Result<keyring::Entry, StoreError> {
    keyring::Entry::new(SERVICE, account).map_err(|e| StoreError::NoKeyring(e.to_string()))
}

fn failure(e: &keyring::Error) -> StoreError {
    match e {
        keyring::Error::NoStorageAccess(_) | keyring::Error::NoDefaultStore => {
            StoreError::NoKeyring(e.to_string())
        }
        other => StoreError::Keyring(other.to_string()),
    }
}

impl KeyringStore {
    /// Whether a keyring answers: a read of an item that need not exist succeeds or says "no
    /// such item" (blocking).
    pub fn probe() -> Result<(), StoreError> {
        match entry(PROBE_ACCOUNT)?.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(StoreError::NoKeyring(e.to_string())),
        }
    }

    /// Whether a keyring answers within 5 s: a session bus whose Secret Service never answers
    /// must not hang a command or hold up every server; after that it counts as absent. Blocking.
    ///
    /// # Errors
    /// Why the keyring is absent, for a message.
    pub fn answers() -> Result<(), String> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Self::probe().map_err(|e| e.to_string()));
        });
        match rx.recv_timeout(PROBE_TIMEOUT) {
            Ok(answer) => answer,
            Err(_) => Err(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
        }
    }

    /// The record under `account`.
    pub fn load(self, account: &str) -> Result<Option<CredentialRecord>, StoreError> {
        match entry(account)?.get_password() {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                StoreError::Keyring(format!("the item for `{account}` is not valid: {e}"))
            }),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(failure(&e)),
        }
    }

    /// Replace (`Some`) or remove (`None`) the record under `account`.
    pub fn put(self, account: &str, record: Option<CredentialRecord>) -> Result<(), StoreError> {
        let item = entry(account)?;
        match record {
            Some(record) => {
                let text = serde_json::to_string(&record)
                    .map_err(|e| StoreError::Keyring(e.to_string()))?;
                item.set_password(&text).map_err(|e| failure(&e))
            }
            None => match item.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(failure(&e)),
            },
        }
    }
}
