//! Named secret values (`ENTRY.VAR`: an API key a server needs) kept where the OAuth
//! credentials are: the OS keyring when one answers, else a 0600 file in the data folder. A
//! config refers to one as `${secret:ENTRY.VAR}` (see `crate::config`), so the value itself
//! never sits in the config file.
//!
//! In the keyring each secret is its own item (service `pegboard`, account `secret NAME`); the
//! keyring cannot list items, so the names (never the values) are also kept in
//! `secret-names.json` beside the credential file. With the file backend, names and values are in
//! `secrets.json` (0600, in the 0700 data folder). Every change holds `secrets.lock`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::StoreError;
use super::file::write_atomically;
use super::lock::LockGuard;
use super::os_keyring::{self, KeyringStore};
use super::paths;
use crate::config::CredentialsBackend;

/// The file backend's file.
const FILE_NAME: &str = "secrets.json";
/// The keyring backend's list of names.
const NAMES_FILE: &str = "secret-names.json";
/// Held around every change.
const LOCK_FILE: &str = "secrets.lock";

/// The file backend's contents (and, values left empty, the keyring backend's names).
#[derive(Default, Serialize, Deserialize)]
struct Contents {
    version: u32,
    secrets: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    File,
    Keyring,
}

/// The secrets of this user (see the module docs).
#[derive(Debug, Clone)]
pub struct Secrets {
    backend: Backend,
    dir: PathBuf,
}

/// Whether `name` may name a secret: letters, digits, `_`, `-`, `.`, at most 200 characters.
pub fn is_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl Secrets {
    /// The store `choice` names (as the config's `credentials` does): the keyring, the file, or
    /// (`Auto`) the keyring when one answers within 5 s and the file otherwise. Blocking.
    ///
    /// # Errors
    /// No data folder, or the keyring was asked for and none answers.
    pub fn open(choice: CredentialsBackend) -> Result<Self, StoreError> {
        let dir = paths::data_dir()?;
        let backend = match choice {
            CredentialsBackend::File => Backend::File,
            CredentialsBackend::Keyring => {
                KeyringStore::answers().map_err(StoreError::NoKeyring)?;
                Backend::Keyring
            }
            // Named secrets stay on this machine even when upstream credentials are kept in
            // the fleet's store: they fill this replica's config.
            CredentialsBackend::Auto | CredentialsBackend::Store => match KeyringStore::answers() {
                Ok(()) => Backend::Keyring,
                Err(why) => {
                    tracing::debug!("no OS keyring ({why}); secrets go to a file");
                    Backend::File
                }
            },
        };
        Ok(Self { backend, dir })
    }

    /// Where secrets go, for messages: "the OS keyring" or the file's path.
    pub fn describe(&self) -> String {
        match self.backend {
            Backend::File => format!("`{}`", self.dir.join(FILE_NAME).display()),
            Backend::Keyring => "the OS keyring".to_string(),
        }
    }

    /// The value of `name`, if stored.
    ///
    /// # Errors
    /// The store cannot be read.
    pub fn get(&self, name: &str) -> Result<Option<String>, StoreError> {
        match self.backend {
            Backend::File => Ok(read(&self.dir.join(FILE_NAME))?.secrets.remove(name)),
            Backend::Keyring => match entry(name)?.get_password() {
                Ok(value) => Ok(Some(value)),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(StoreError::Keyring(e.to_string())),
            },
        }
    }

    /// Store `value` as `name` (replacing what was there).
    ///
    /// # Errors
    /// The store cannot be written; nothing changed then.
    pub fn set(&self, name: &str, value: &str) -> Result<(), StoreError> {
        self.change(name, Some(value)).map(drop)
    }

    /// Forget `name`; whether it was stored.
    ///
    /// # Errors
    /// The store cannot be written.
    pub fn remove(&self, name: &str) -> Result<bool, StoreError> {
        self.change(name, None)
    }

    /// The names stored, sorted.
    ///
    /// # Errors
    /// The store cannot be read.
    pub fn names(&self) -> Result<Vec<String>, StoreError> {
        let file = match self.backend {
            Backend::File => FILE_NAME,
            Backend::Keyring => NAMES_FILE,
        };
        Ok(read(&self.dir.join(file))?.secrets.into_keys().collect())
    }

    /// Set (`Some`) or delete (`None`) under the lock; returns whether `name` was there before.
    fn change(&self, name: &str, value: Option<&str>) -> Result<bool, StoreError> {
        paths::private_dir(&self.dir)?;
        let _guard = LockGuard::acquire(&self.dir.join(LOCK_FILE))?;
        let file = self.dir.join(match self.backend {
            Backend::File => FILE_NAME,
            Backend::Keyring => NAMES_FILE,
        });
        let mut contents = read(&file)?;
        contents.version = 1;
        if self.backend == Backend::Keyring {
            let item = entry(name)?;
            match value {
                Some(v) => item
                    .set_password(v)
                    .map_err(|e| StoreError::Keyring(e.to_string()))?,
                None => match item.delete_credential() {
                    Ok(()) | Err(keyring::Error::NoEntry) => {}
                    Err(e) => return Err(StoreError::Keyring(e.to_string())),
                },
            }
        }
        // The keyring backend's file keeps names only.
        let kept = match self.backend {
            Backend::File => value.map(str::to_string),
            Backend::Keyring => value.map(|_| String::new()),
        };
        let was = match kept {
            Some(v) => contents.secrets.insert(name.to_string(), v).is_some(),
            None => contents.secrets.remove(name).is_some(),
        };
        let text = serde_json::to_vec_pretty(&contents).map_err(|e| StoreError::Corrupt {
            path: file.clone(),
            message: e.to_string(),
        })?;
        write_atomically(&file, &text)?;
        Ok(was)
    }
}

fn entry(name: &str) -> Result<keyring::Entry, StoreError> {
    os_keyring::entry(&format!("secret {name}"))
}

fn read(path: &Path) -> Result<Contents, StoreError> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Contents::default()),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    serde_json::from_slice(&text).map_err(|e| StoreError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_dir(dir: &Path) -> Secrets {
        Secrets {
            backend: Backend::File,
            dir: dir.to_path_buf(),
        }
    }

    #[test]
    fn set_get_list_remove_in_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let secrets = in_dir(dir.path());
        assert_eq!(secrets.get("a.B").expect("get"), None);
        secrets.set("a.B", "one").expect("set");
        secrets.set("c.D", "two").expect("set");
        secrets.set("a.B", "three").expect("replace");
        assert_eq!(secrets.get("a.B").expect("get").as_deref(), Some("three"));
        assert_eq!(secrets.names().expect("names"), ["a.B", "c.D"]);
        assert!(secrets.remove("a.B").expect("rm"));
        assert!(!secrets.remove("a.B").expect("rm again"));
        assert_eq!(secrets.names().expect("names"), ["c.D"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(FILE_NAME))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_corrupt_file_is_reported_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(FILE_NAME), "{not json").expect("write");
        let secrets = in_dir(dir.path());
        assert!(matches!(
            secrets.set("a.B", "x"),
            Err(StoreError::Corrupt { .. })
        ));
        assert_eq!(
            std::fs::read_to_string(dir.path().join(FILE_NAME)).expect("read"),
            "{not json"
        );
    }

    #[test]
    fn names() {
        assert!(is_secret_name("memory.API_KEY"));
        assert!(is_secret_name("my-server.X"));
        assert!(!is_secret_name(""));
        assert!(!is_secret_name("a b"));
        assert!(!is_secret_name("a}b"));
    }
}
