//! What the last listings of one server found: each tool's and prompt's status against its pin,
//! what was done with it, and the description scan's findings. Logging and counting happen once
//! per news, not once per listing (prompts are listed on every `prompts/list`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use super::lock::{Kind, ServerId};
use super::status::{Action, Status};
use crate::guards::scan::Finding;

/// One item of one listing, as the pins and the scan saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Tool or prompt.
    pub kind: Kind,
    /// Its name at the server.
    pub name: String,
    /// Its name on the board.
    pub board_name: String,
    /// Against its pin (`Pinned` when there is no lock).
    pub status: Status,
    /// What was done.
    pub action: Action,
    /// The digest of its definition as the server sent it.
    pub sha256: String,
    /// That definition (keys sorted).
    pub definition: serde_json::Value,
    /// What the description scan found in it (before any stripping).
    pub findings: Vec<Finding>,
}

/// The shared record of one server entry's listings. Clones share it; it is runtime state, so
/// two reports are always equal (it never makes a config entry look changed).
#[derive(Clone, Default)]
pub struct Report(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    items: BTreeMap<(Kind, String), Verdict>,
    server: Option<ServerId>,
}

impl PartialEq for Report {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Report(..)")
    }
}

impl Report {
    /// Replace what is known of `kind` with this listing; returns the verdicts that are news:
    /// an item not seen before, or seen with another definition, action or findings.
    pub fn record(
        &self,
        kind: Kind,
        server: Option<ServerId>,
        verdicts: Vec<Verdict>,
    ) -> Vec<Verdict> {
        // Only whole values are stored: a panic elsewhere cannot leave the map half-written.
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if server.is_some() {
            state.server = server;
        }
        let known = &mut state.items;
        let mut news = Vec::new();
        let mut next: BTreeMap<(Kind, String), Verdict> = known
            .iter()
            .filter(|((k, _), _)| *k != kind)
            .map(|(key, v)| (key.clone(), v.clone()))
            .collect();
        for verdict in verdicts {
            let key = (kind, verdict.name.clone());
            if known.get(&key) != Some(&verdict) {
                news.push(verdict.clone());
            }
            next.insert(key, verdict);
        }
        *known = next;
        news
    }

    /// Every item of the last listings, tools first, by name.
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .items
            .values()
            .cloned()
            .collect()
    }

    /// What the server said it was at its last listing.
    pub fn server(&self) -> Option<ServerId> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .server
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(name: &str, sha: &str, action: Action) -> Verdict {
        Verdict {
            kind: Kind::Tool,
            name: name.into(),
            board_name: format!("s-{name}"),
            status: Status::Changed,
            action,
            sha256: sha.into(),
            definition: serde_json::json!({"name": name, "v": sha}),
            findings: Vec::new(),
        }
    }

    #[test]
    fn only_news_is_returned_and_a_listing_replaces_its_kind() {
        let report = Report::default();
        let first = report.record(Kind::Tool, None, vec![verdict("a", "1", Action::Hide)]);
        assert_eq!(first.len(), 1);
        assert!(
            report
                .record(Kind::Tool, None, vec![verdict("a", "1", Action::Hide)])
                .is_empty()
        );
        let changed = report.record(Kind::Tool, None, vec![verdict("a", "2", Action::Hide)]);
        assert_eq!(changed[0].sha256, "2");
        report.record(Kind::Tool, None, vec![verdict("b", "1", Action::Keep)]);
        let names: Vec<String> = report.verdicts().into_iter().map(|v| v.name).collect();
        assert_eq!(names, ["b"]);
        assert_eq!(Report::default(), report);
    }
}
