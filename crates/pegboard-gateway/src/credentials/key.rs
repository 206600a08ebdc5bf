//! Which entry of the store a server's credentials live under: its URL and its client.

use sha2::{Digest, Sha256};

use crate::config::OAuthSettings;

/// The key of one server's entry: the server's URL and the client it logs in as. Two config
/// entries naming the same URL and client share one login; a different `clientId` is another.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreKey {
    url: String,
    client: String,
}

impl StoreKey {
    /// The key for the server at `url` with these settings: the configured client id, else the
    /// client metadata document URL, else `dynamic` (a registration made at the first login).
    pub fn new(url: &str, settings: &OAuthSettings) -> Self {
        let client = settings
            .client_id
            .clone()
            .or_else(|| settings.client_metadata_url.clone())
            .unwrap_or_else(|| "dynamic".to_string());
        Self {
            url: url.to_string(),
            client,
        }
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The entry's name: `URL CLIENT` (the keyring's account, the file's key).
    pub fn account(&self) -> String {
        format!("{} {}", self.url, self.client)
    }

    /// A short file-name-safe digest of [`account`](Self::account), for the lock file.
    pub fn digest(&self) -> String {
        let hash = Sha256::digest(self.account().as_bytes());
        hash.iter().take(16).map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_part_of_the_key() {
        let url = "https://mcp.example.com/mcp";
        let dynamic = StoreKey::new(url, &OAuthSettings::default());
        let fixed = StoreKey::new(
            url,
            &OAuthSettings {
                client_id: Some("pegboard".into()),
                ..OAuthSettings::default()
            },
        );
        assert_eq!(dynamic.account(), "https://mcp.example.com/mcp dynamic");
        assert_eq!(fixed.account(), "https://mcp.example.com/mcp pegboard");
        assert_ne!(dynamic.digest(), fixed.digest());
        assert_eq!(dynamic.digest().len(), 32);
    }
}
