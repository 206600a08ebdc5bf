//! `pegboard pin --accept NAME|SERVER|--all`: take what the servers offer now into the lock.

use std::collections::BTreeMap;

use super::diff::{Change, Observed, changes};
use super::lock::{Kind, Lock, Pin, ServerPins};

/// What to accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// Every server that answered.
    All,
    /// A server (config entry name), or one tool or prompt (its board name, or its name at the
    /// server when only one server has it).
    Name(String),
}

/// Why nothing was accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AcceptError {
    /// The name is no server and no tool or prompt.
    #[error(
        "nothing named `{name}`: it is not a server of the config ({servers}) nor a tool or prompt they offer or that is pinned; `pegboard pin --diff` shows what differs"
    )]
    Unknown {
        /// The name given.
        name: String,
        /// The servers, comma separated.
        servers: String,
    },
    /// The name is a tool or prompt of more than one server.
    #[error(
        "`{name}` is offered by more than one server; accept one of {choices} by its board name, or the server"
    )]
    Ambiguous {
        /// The name given.
        name: String,
        /// Board names to choose from.
        choices: String,
    },
}

/// Accept `selector` into `lock`, from what each server (by config entry name) offers now;
/// returns one line per change made. Nothing changes on an error.
///
/// # Errors
/// [`AcceptError`]: the name is unknown or ambiguous.
pub fn accept(
    lock: &mut Lock,
    observed: &BTreeMap<String, Observed>,
    selector: &Selector,
) -> Result<Vec<String>, AcceptError> {
    let servers: Vec<&String> = match selector {
        Selector::All => observed.keys().collect(),
        Selector::Name(name) if observed.contains_key(name) => vec![name],
        Selector::Name(name) => return accept_item(lock, observed, name),
    };
    let mut done = Vec::new();
    for server in servers {
        let Some(now) = observed.get(server) else {
            continue;
        };
        let section = lock.servers.entry(server.clone()).or_default();
        for change in changes(Some(section), now) {
            done.push(describe(server, &change));
        }
        *section = pins_of(now);
    }
    Ok(done)
}

fn accept_item(
    lock: &mut Lock,
    observed: &BTreeMap<String, Observed>,
    name: &str,
) -> Result<Vec<String>, AcceptError> {
    // Every (server, change) whose item the name designates: by board name, else by the
    // server's own name.
    let mut found: Vec<(String, Change)> = Vec::new();
    for (server, now) in observed {
        for change in changes(lock.servers.get(server), now) {
            let (_, own) = change.item();
            let board = match &change {
                Change::Changed { now, .. } | Change::New { now, .. } => {
                    Some(now.board_name.as_str())
                }
                Change::Gone { .. } => None,
            };
            if board == Some(name) || own == name {
                found.push((server.clone(), change));
            }
        }
    }
    if found.len() > 1
        && let Some(exact) = found.iter().position(|(_, c)| match c {
            Change::Changed { now, .. } | Change::New { now, .. } => now.board_name == name,
            Change::Gone { .. } => false,
        })
    {
        found = vec![found.swap_remove(exact)];
    }
    match found.len() {
        0 => {
            let pinned_or_offered = observed.iter().any(|(server, now)| {
                now.items.values().any(|i| i.board_name == name)
                    || now.items.keys().any(|(_, n)| n == name)
                    || lock
                        .servers
                        .get(server)
                        .is_some_and(|p| p.tools.contains_key(name) || p.prompts.contains_key(name))
            });
            if pinned_or_offered {
                // It is there and matches its pin: nothing to do.
                return Ok(Vec::new());
            }
            Err(AcceptError::Unknown {
                name: name.to_string(),
                servers: observed.keys().cloned().collect::<Vec<_>>().join(", "),
            })
        }
        1 => {
            let (server, change) = found.remove(0);
            let line = describe(&server, &change);
            let section = lock.servers.entry(server.clone()).or_default();
            if section.server.is_none() {
                section.server = observed.get(&server).and_then(|o| o.server.clone());
            }
            match change {
                Change::Changed {
                    kind, name, now, ..
                }
                | Change::New { kind, name, now } => {
                    section.of_mut(kind).insert(name, Pin::of(now.definition));
                }
                Change::Gone { kind, name, .. } => {
                    section.of_mut(kind).remove(&name);
                }
            }
            Ok(vec![line])
        }
        _ => Err(AcceptError::Ambiguous {
            name: name.to_string(),
            choices: found
                .iter()
                .map(|(server, c)| match c {
                    Change::Changed { now, .. } | Change::New { now, .. } => {
                        format!("`{}`", now.board_name)
                    }
                    Change::Gone { .. } => format!("server `{server}`"),
                })
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A server's section of the lock, pinning everything it offers now.
pub fn pins_of(now: &Observed) -> ServerPins {
    let mut pins = ServerPins {
        server: now.server.clone(),
        ..ServerPins::default()
    };
    for ((kind, name), item) in &now.items {
        pins.of_mut(*kind)
            .insert(name.clone(), Pin::of(item.definition.clone()));
    }
    pins
}

fn describe(server: &str, change: &Change) -> String {
    let (kind, name) = change.item();
    let what = kind.as_str();
    let done = match change {
        Change::Changed { .. } => "pinned again (changed)",
        Change::New { .. } => "pinned (new)",
        Change::Gone { .. } => "unpinned (no longer offered)",
    };
    format!("{server}: {what} `{name}` {done}")
}

/// Whether `kind` items are all pinned as offered (for messages).
pub fn all_pinned(lock: &Lock, server: &str, now: &Observed, kind: Kind) -> bool {
    changes(lock.servers.get(server), now)
        .iter()
        .all(|c| c.item().0 != kind)
}

#[cfg(test)]
mod tests {
    use super::super::diff::Item;
    use super::super::lock::ServerId;
    use super::*;

    fn observed(server: &str, ns: &str, items: &[(&str, &str)]) -> Observed {
        let mut o = Observed {
            server: Some(ServerId {
                name: server.into(),
                version: "1".into(),
            }),
            ..Observed::default()
        };
        for (name, description) in items {
            let pin = Pin::of(serde_json::json!({"name": name, "description": description}));
            o.items.insert(
                (Kind::Tool, name.to_string()),
                Item {
                    board_name: format!("{ns}-{name}"),
                    definition: pin.definition,
                    sha256: pin.sha256,
                },
            );
        }
        o
    }

    #[test]
    fn accept_one_tool_by_board_or_own_name_and_a_whole_server() {
        let mut all = BTreeMap::new();
        all.insert(
            "a".to_string(),
            observed("a", "a", &[("x", "1"), ("y", "1")]),
        );
        all.insert("b".to_string(), observed("b", "b", &[("x", "1")]));
        let mut lock = Lock::default();
        assert!(matches!(
            accept(&mut lock, &all, &Selector::Name("x".into())),
            Err(AcceptError::Ambiguous { .. })
        ));
        assert_eq!(lock, Lock::default(), "an error changes nothing");
        let done = accept(&mut lock, &all, &Selector::Name("b-x".into())).unwrap();
        assert_eq!(done, ["b: tool `x` pinned (new)"]);
        let done = accept(&mut lock, &all, &Selector::Name("y".into())).unwrap();
        assert_eq!(done, ["a: tool `y` pinned (new)"]);
        let done = accept(&mut lock, &all, &Selector::Name("a".into())).unwrap();
        assert_eq!(done, ["a: tool `x` pinned (new)"]);
        assert!(accept(&mut lock, &all, &Selector::All).unwrap().is_empty());
        assert_eq!(lock.servers["a"].tools.len(), 2);

        // The server changes `x` and drops `y`.
        all.insert("a".to_string(), observed("a", "a", &[("x", "2")]));
        let err = accept(&mut lock, &all, &Selector::Name("zzz".into())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "nothing named `zzz`: it is not a server of the config (a, b) nor a tool or prompt they offer or that is pinned; `pegboard pin --diff` shows what differs"
        );
        let done = accept(&mut lock, &all, &Selector::All).unwrap();
        assert_eq!(
            done,
            [
                "a: tool `x` pinned again (changed)",
                "a: tool `y` unpinned (no longer offered)"
            ]
        );
        assert!(all_pinned(&lock, "a", &all["a"], Kind::Tool));
    }
}
