//! Where the fleet's shared state is kept: `--store URL`, `PEGBOARD_STORE`, or the config's
//! top-level `"store": {"url": "redis://HOST:PORT/DB"}` (Redis 7, or Valkey: same protocol).
//!
//! Only the address is checked here (data, no I/O); the connection is `crate::store`'s. A URL may
//! carry a password (`redis://:secret@host/0`): it is kept for connecting and never shown: the
//! [`Display`](fmt::Display) and [`Debug`] of a [`StoreUrl`] write `***` in its place.
//!
//! ```
//! use pegboard_gateway::config::StoreUrl;
//! let url: StoreUrl = "redis://:hunter2@cache.internal:6380/2".parse()?;
//! assert_eq!(url.to_string(), "redis://:***@cache.internal:6380/2");
//! assert!(!url.is_tls());
//! assert!("http://cache.internal".parse::<StoreUrl>().is_err());
//! # Ok::<(), pegboard_gateway::config::StoreUrlError>(())
//! ```

use std::fmt;
use std::str::FromStr;

/// The key prefix when the config names none: every key the gateway writes starts with it.
pub const DEFAULT_STORE_PREFIX: &str = "pegboard";

/// A store's address, checked: `redis://` or `rediss://` (TLS), a host, an optional port and a
/// database number.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    /// The URL as given (with its password, if any): what the client connects with.
    raw: String,
    /// The URL with its user name and password written `***`: what messages show.
    shown: String,
    tls: bool,
}

/// Why a store URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreUrlError {
    /// Not a URL at all.
    #[error(
        "the store `{shown}` is not a URL ({reason}): write it as redis://HOST:PORT/DB (or rediss:// for TLS)"
    )]
    NotUrl {
        /// What was given, its password hidden when it could be found.
        shown: String,
        /// What the URL parser said.
        reason: String,
    },
    /// A scheme other than `redis` or `rediss`.
    #[error(
        "the store `{shown}` uses `{scheme}://`; the store speaks the Redis protocol (Redis 7, Valkey): write redis://HOST:PORT/DB, or rediss:// for TLS"
    )]
    Scheme {
        /// The URL, its password hidden.
        shown: String,
        /// The scheme given.
        scheme: String,
    },
    /// No host.
    #[error("the store `{shown}` names no host: write redis://HOST:PORT/DB")]
    NoHost {
        /// The URL, its password hidden.
        shown: String,
    },
    /// A path that is not a database number.
    #[error(
        "the store `{shown}` has the path `{path}`; the path is the database number (redis://HOST:PORT/0), or nothing"
    )]
    Database {
        /// The URL, its password hidden.
        shown: String,
        /// The path given.
        path: String,
    },
    /// Query parameters or a fragment, which the gateway would not honour.
    #[error(
        "the store `{shown}` has `?...` or `#...`: leave them out (the gateway sets its own timeouts)"
    )]
    Extra {
        /// The URL, its password hidden.
        shown: String,
    },
}

impl StoreUrl {
    /// The URL with its password: for the client only, never for a message.
    #[cfg_attr(not(feature = "store"), allow(dead_code))]
    pub(crate) fn connect_string(&self) -> &str {
        &self.raw
    }

    /// `rediss://`: the connection is TLS.
    pub fn is_tls(&self) -> bool {
        self.tls
    }
}

/// `url` with its user name and password replaced by `***` (both when there is either).
fn hidden(url: &url::Url) -> String {
    let mut shown = url.clone();
    if !url.username().is_empty() {
        let _ = shown.set_username("***");
    }
    if url.password().is_some() {
        let _ = shown.set_password(Some("***"));
    }
    shown.to_string()
}

/// A text that did not parse as a URL, all before its last `@` (a user and password, it may be)
/// hidden, the scheme kept.
fn hidden_text(text: &str) -> String {
    let Some(at) = text.rfind('@') else {
        return text.to_string();
    };
    match text.find("://") {
        Some(scheme_end) if at > scheme_end => {
            format!("{}***{}", &text[..scheme_end + 3], &text[at..])
        }
        _ => format!("***{}", &text[at..]),
    }
}

impl FromStr for StoreUrl {
    type Err = StoreUrlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let url = url::Url::parse(text).map_err(|e| StoreUrlError::NotUrl {
            shown: hidden_text(text),
            reason: e.to_string(),
        })?;
        let shown = hidden(&url);
        let tls = match url.scheme() {
            "redis" => false,
            "rediss" => true,
            other => {
                return Err(StoreUrlError::Scheme {
                    shown,
                    scheme: other.to_string(),
                });
            }
        };
        if url.host_str().is_none_or(str::is_empty) {
            return Err(StoreUrlError::NoHost { shown });
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(StoreUrlError::Extra { shown });
        }
        let path = url.path().trim_start_matches('/');
        if !path.is_empty() && path.parse::<u16>().is_err() {
            return Err(StoreUrlError::Database {
                path: path.to_string(),
                shown,
            });
        }
        Ok(Self {
            raw: text.to_string(),
            shown,
            tls,
        })
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StoreUrl").field(&self.shown).finish()
    }
}

/// The config's `"store"`: where, and the prefix of every key (so several gateways, or other
/// programs, can share one database).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSettings {
    /// The store's address.
    pub url: StoreUrl,
    /// What every key starts with (`PREFIX:...`), [`DEFAULT_STORE_PREFIX`] by default.
    pub prefix: String,
}

impl StoreSettings {
    /// `url` with the default prefix.
    pub fn new(url: StoreUrl) -> Self {
        Self {
            url,
            prefix: DEFAULT_STORE_PREFIX.to_string(),
        }
    }

    /// Read the config's `"store"` value: `{"url": "...", "prefix": "..."}` (`prefix` optional),
    /// `url` after `${VAR}` expansion by `expand`.
    ///
    /// # Errors
    /// A message for the config's error: a wrongly shaped value, a bad URL or prefix.
    pub(crate) fn from_json(
        value: &serde_json::Value,
        expand: &dyn Fn(&str) -> Result<String, String>,
    ) -> Result<Self, String> {
        let serde_json::Value::Object(map) = value else {
            return Err(
                "`store` must be an object: \"store\": {\"url\": \"redis://HOST:PORT/DB\"}".into(),
            );
        };
        for key in map.keys() {
            if key != "url" && key != "prefix" {
                return Err(format!(
                    "`store` has the unknown field `{key}`: it takes `url` and `prefix`"
                ));
            }
        }
        let Some(serde_json::Value::String(url)) = map.get("url") else {
            return Err("`store.url` must be a string such as \"redis://127.0.0.1:6379/0\"".into());
        };
        let url: StoreUrl = expand(url)?
            .parse()
            .map_err(|e: StoreUrlError| e.to_string())?;
        let prefix = match map.get("prefix") {
            None => DEFAULT_STORE_PREFIX.to_string(),
            Some(serde_json::Value::String(p)) if valid_prefix(p) => p.clone(),
            Some(_) => {
                return Err(
                    "`store.prefix` must be 1 to 64 letters, digits, `-`, `_`, `.` or `:`".into(),
                );
            }
        };
        Ok(Self { url, prefix })
    }
}

fn valid_prefix(prefix: &str) -> bool {
    (1..=64).contains(&prefix.len())
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_urls_parse_and_hide_their_password() {
        for (text, shown, tls) in [
            (
                "redis://127.0.0.1:6379/0",
                "redis://127.0.0.1:6379/0",
                false,
            ),
            ("redis://cache", "redis://cache", false),
            (
                "rediss://u:pw@cache:6380/3",
                "rediss://***:***@cache:6380/3",
                true,
            ),
            ("redis://:pw@[::1]:7000", "redis://:***@[::1]:7000", false),
        ] {
            let url: StoreUrl = text.parse().unwrap();
            assert_eq!(url.to_string(), shown);
            assert_eq!(format!("{url:?}"), format!("StoreUrl({shown:?})"));
            assert_eq!(url.is_tls(), tls);
            assert_eq!(url.connect_string(), text);
        }
    }

    #[test]
    fn bad_urls_say_why_and_never_show_the_password() {
        let cases = [
            ("http://:pw@cache:6379", "uses `http://`"),
            ("cache:6379", "uses `cache://`"),
            ("redis://:pw@cache/db1", "the database number"),
            ("redis://:pw@cache/0?timeout=1", "leave them out"),
            ("redis://:pw@", "host"),
            ("not a url :pw@", "not a URL"),
        ];
        for (text, says) in cases {
            let err = text.parse::<StoreUrl>().unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
            assert!(!err.contains("pw"), "{text}: {err}");
        }
    }

    #[test]
    fn the_config_value_is_read_whole() {
        let expand = |s: &str| Ok(s.replace("${PORT}", "6390"));
        let s = StoreSettings::from_json(
            &serde_json::json!({"url": "redis://127.0.0.1:${PORT}/1"}),
            &expand,
        )
        .unwrap();
        assert_eq!(s.url.to_string(), "redis://127.0.0.1:6390/1");
        assert_eq!(s.prefix, DEFAULT_STORE_PREFIX);
        let s = StoreSettings::from_json(
            &serde_json::json!({"url": "redis://h", "prefix": "team-a:pb"}),
            &expand,
        )
        .unwrap();
        assert_eq!(s.prefix, "team-a:pb");
        for (value, says) in [
            (serde_json::json!("redis://h"), "must be an object"),
            (serde_json::json!({"host": "h"}), "unknown field `host`"),
            (serde_json::json!({}), "`store.url` must be a string"),
            (serde_json::json!({"url": "h:1"}), "uses `h://`"),
            (
                serde_json::json!({"url": "redis://h", "prefix": "a b"}),
                "`store.prefix`",
            ),
            (
                serde_json::json!({"url": "redis://h", "prefix": ""}),
                "`store.prefix`",
            ),
        ] {
            let err = StoreSettings::from_json(&value, &expand).unwrap_err();
            assert!(err.contains(says), "{value}: {err}");
        }
    }
}
