//! Where `${secret:NAME}` is read from while a config file loads: the credential store the
//! file's `credentials` names, opened the first time a secret is asked for (a file without
//! secrets never touches the keyring).

use std::sync::OnceLock;

use super::CredentialsBackend;
use crate::credentials::Secrets;

/// A lazily opened secret store for one load.
pub(super) struct SecretLookup {
    backend: CredentialsBackend,
    store: OnceLock<Option<Secrets>>,
}

impl SecretLookup {
    /// The store of the config `text` (its top-level `credentials`, else the default).
    pub(super) fn for_text(text: &str) -> Self {
        let backend = if text.contains("${secret:") {
            serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("credentials")?.as_str().map(str::to_string))
                .and_then(|c| CredentialsBackend::parse(&c).ok())
                .unwrap_or_default()
        } else {
            CredentialsBackend::default()
        };
        Self {
            backend,
            store: OnceLock::new(),
        }
    }

    /// The secret `name`; `None` when it is not stored or the store cannot be read (logged).
    pub(super) fn get(&self, name: &str) -> Option<String> {
        let store = self
            .store
            .get_or_init(|| match Secrets::open(self.backend) {
                Ok(store) => Some(store),
                Err(e) => {
                    tracing::warn!("cannot open the secret store: {e}");
                    None
                }
            });
        match store.as_ref()?.get(name) {
            Ok(value) => value,
            Err(e) => {
                tracing::warn!("cannot read secret `{name}`: {e}");
                None
            }
        }
    }
}
