//! What a stored session was last answered of each list (the `told` field of its hash, see
//! `store/sessions.rs`), so that a replica that adopts it tells it a `list_changed` when the
//! list it would answer now differs, and keeps telling it later changes (`server/feed.rs`).
//!
//! Only what compares across replicas is kept: for tools a fingerprint of the names and
//! definitions the client was shown (`ClientView::fingerprint`, SHA-256, in name order: the
//! board's order is the order its servers joined, which differs between replicas with the same
//! servers), for prompts and resources the names of the servers whose prompts (resources) it
//! may see (a server's connection, which `feed.rs` compares on one replica, means nothing on
//! another). A list left out was never asked for: an adopted session is told nothing about it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The key of a server added without a namespace, among the servers' names.
pub(crate) const NO_NAMESPACE: &str = "";

/// What a session was last answered of each list (`None`: never asked).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct Listed {
    /// The fingerprint of the tools of its last `tools/list` answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tools: Option<String>,
    /// The servers whose prompts its client saw in its last `prompts/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompts: Option<BTreeSet<String>>,
    /// The servers whose resources its client saw in its last resource listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) resources: Option<BTreeSet<String>>,
}

impl Listed {
    /// Whether it never asked for any list (nothing to keep).
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_none() && self.prompts.is_none() && self.resources.is_none()
    }

    /// As the hash's `told` field.
    pub(crate) fn to_field(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The `told` field read back. One this release cannot read (written by a later one, or
    /// damaged) counts as nothing listed: the session's lists are current at its next listing,
    /// only a change before it goes untold, where refusing the session would lose it whole.
    pub(crate) fn from_field(field: Option<&str>) -> Self {
        let Some(field) = field else {
            return Self::default();
        };
        serde_json::from_str(field).unwrap_or_else(|e| {
            tracing::debug!("a stored session's `told` is unreadable ({e}): taken as never listed");
            Self::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_round_trips_and_leaves_out_what_was_never_asked() {
        let listed = Listed {
            tools: Some("0123abcd".into()),
            prompts: None,
            resources: Some(BTreeSet::new()),
        };
        let field = listed.to_field();
        assert_eq!(field, r#"{"tools":"0123abcd","resources":[]}"#);
        assert_eq!(Listed::from_field(Some(&field)), listed);
        // An older release's record (no field), and one this release cannot read: never asked.
        assert!(Listed::from_field(None).is_empty());
        assert!(Listed::from_field(Some("[1, 2]")).is_empty());
        // A later release's member is ignored, what this one knows kept.
        let later = Listed::from_field(Some(r#"{"tools":"ff","templates":["x"]}"#));
        assert_eq!(later.tools.as_deref(), Some("ff"));
    }
}
