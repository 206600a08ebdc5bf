//! Upstream OAuth credentials, kept safely: the OS keyring where one answers, else a private file.
//!
//! One entry per server URL and client ([`StoreKey`]) holds a [`CredentialRecord`]: the client's
//! registration (reused at the next login), the authorization server's metadata, and rmcp's
//! tokens. The file store is `$XDG_DATA_HOME/pegboard/credentials.json` (default
//! `~/.local/share/pegboard/`), mode 0600 in a 0700 folder, replaced atomically at each write.
//! Each entry has a lock file (`locks/<digest>.lock`): a refresh holds it from reading the
//! refresh token to storing the rotated one, so processes sharing the store never spend one
//! refresh token twice; its modification time tells watchers that the entry changed.
//!
//! Nothing here logs or prints a token: every type's `Debug` redacts them.

mod error;
mod file;
#[cfg(feature = "store")]
mod in_store;
mod key;
mod lock;
mod os_keyring;
mod paths;
mod record;
mod rmcp_store;
#[cfg(feature = "store")]
mod seal;
mod secrets;
mod store;
#[cfg(test)]
mod tests;

pub use error::StoreError;
// `InStore` and `SealKey` are named outside this module only by the `testing` helpers.
#[cfg(all(feature = "store", any(test, feature = "testing")))]
pub(crate) use in_store::InStore;
#[cfg(feature = "store")]
pub(crate) use in_store::use_store;
pub use key::StoreKey;
pub use record::{ClientRegistration, CredentialRecord, RegistrationKind, now_epoch};
pub use rmcp_store::{REFUSED, RmcpStore};
#[cfg(all(feature = "store", any(test, feature = "testing")))]
pub(crate) use seal::SealKey;
pub use secrets::{Secrets, is_secret_name};
pub use store::{ServerStore, Store};
