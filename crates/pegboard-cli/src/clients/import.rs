//! `import`: a client's servers into pegboard's config, each once.

use serde_json::Value;

use super::convert::{identity, is_server, to_pegboard};
use super::known::ClientId;
use crate::config_edit::ConfigEdit;
use crate::edit_error::EditError;

/// What became of one server.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Added under its own name.
    Added {
        /// Fields dropped on the way.
        notes: Vec<String>,
    },
    /// The same definition is already in the config.
    Same {
        /// Under this name.
        as_name: String,
    },
    /// Its name was taken by another definition: added as `to`.
    Renamed {
        /// The name it got.
        to: String,
        /// Fields dropped on the way.
        notes: Vec<String>,
    },
    /// Cannot run behind pegboard.
    NotImportable {
        /// Why.
        why: String,
    },
}

/// One server of one client and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The client it came from.
    pub client: &'static str,
    /// Its name there.
    pub name: String,
    /// What became of it.
    pub outcome: Outcome,
}

impl Line {
    /// Whether it now runs behind pegboard (so `--move` may take it out of the client).
    pub fn in_pegboard(&self) -> bool {
        !matches!(self.outcome, Outcome::NotImportable { .. })
    }

    /// The line printed for it.
    pub fn render(&self) -> String {
        let notes = |notes: &[String]| {
            if notes.is_empty() {
                String::new()
            } else {
                format!("; {}", notes.join("; "))
            }
        };
        let who = format!("{}: {}", self.client, self.name);
        match &self.outcome {
            Outcome::Added { notes: n } => format!("{who}: added{}", notes(n)),
            Outcome::Same { as_name } => format!("{who}: already there (same as {as_name})"),
            Outcome::Renamed { to, notes: n } => {
                format!(
                    "{who}: added as {to} (the name {} is taken by another server){}",
                    self.name,
                    notes(n)
                )
            }
            Outcome::NotImportable { why } => format!("{who}: not importable: {why}"),
        }
    }
}

/// Import `entries` (from `client`'s file) into `config`; the client's own `pegboard` entry and
/// Goose's built-in extensions are passed over. `config` is changed in memory only: the caller
/// saves it (or not, for `--dry-run`).
pub fn import_into(
    config: &mut ConfigEdit,
    client: ClientId,
    entries: &[(String, Value)],
) -> Result<Vec<Line>, EditError> {
    let mut lines = Vec::new();
    for (name, entry) in entries {
        if name == "pegboard" || !is_server(client, entry) {
            continue;
        }
        let outcome = match to_pegboard(client, entry) {
            Err(why) => Outcome::NotImportable { why },
            Ok(imported) => {
                let id = identity(&imported.entry);
                let existing = config.entries();
                if let Some((as_name, _)) = existing.iter().find(|(_, e)| identity(e) == id) {
                    Outcome::Same {
                        as_name: as_name.clone(),
                    }
                } else if existing.iter().any(|(n, _)| n == name) {
                    let to = free_name(&existing, &format!("{name}-{}", client.name()));
                    config.insert(&to, imported.entry)?;
                    Outcome::Renamed {
                        to,
                        notes: imported.notes,
                    }
                } else {
                    config.insert(name, imported.entry)?;
                    Outcome::Added {
                        notes: imported.notes,
                    }
                }
            }
        };
        lines.push(Line {
            client: client.name(),
            name: name.clone(),
            outcome,
        });
    }
    Ok(lines)
}

fn free_name(existing: &[(String, Value)], base: &str) -> String {
    let taken = |n: &str| existing.iter().any(|(e, _)| e == n);
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|i| format!("{base}-{i}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| base.to_string())
}

/// The client whose shape a file of servers is in, guessed from its contents (for `import --from
/// FILE` without a client): the servers' key tells most; `mcpServers` JSON is read as Claude
/// Code's (the common shape).
pub fn guess_client(path: &std::path::Path, text: &str) -> Option<ClientId> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    match ext {
        "toml" => return Some(ClientId::Codex),
        "yaml" | "yml" => {
            let value: Value = serde_norway::from_str(text).ok()?;
            return if value.get("extensions").is_some() {
                Some(ClientId::Goose)
            } else {
                Some(ClientId::Continue)
            };
        }
        _ => {}
    }
    let value = jsonc_parser::cst::CstRootNode::parse(text, &super::format::json::lenient())
        .ok()?
        .to_serde_value()?;
    if value.get("context_servers").is_some() {
        Some(ClientId::Zed)
    } else if value.get("mcp").is_some() {
        Some(ClientId::OpenCode)
    } else if value.get("servers").is_some() {
        Some(ClientId::VsCode)
    } else {
        Some(ClientId::ClaudeCode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_files_client_is_guessed_from_its_keys() {
        let guess = |name: &str, text: &str| guess_client(Path::new(name), text);
        assert_eq!(
            guess("c.toml", "[mcp_servers.a]\ncommand = \"x\"\n"),
            Some(ClientId::Codex)
        );
        assert_eq!(
            guess("c.yaml", "extensions:\n  a: {}\n"),
            Some(ClientId::Goose)
        );
        assert_eq!(
            guess("c.yml", "mcpServers:\n  - name: a\n"),
            Some(ClientId::Continue)
        );
        assert_eq!(
            guess("s.json", "{\"context_servers\": {}}"),
            Some(ClientId::Zed)
        );
        assert_eq!(guess("s.json", "{\"mcp\": {}}"), Some(ClientId::OpenCode));
        assert_eq!(
            guess("m.json", "// vscode\n{\"servers\": {}}"),
            Some(ClientId::VsCode)
        );
        assert_eq!(
            guess("m.json", "{\"mcpServers\": {}}"),
            Some(ClientId::ClaudeCode)
        );
        assert_eq!(guess("m.json", "not json"), None);
    }

    #[test]
    fn a_taken_name_gets_the_clients_suffix_then_a_number() {
        let existing = vec![
            ("memory".to_string(), Value::Null),
            ("memory-cursor".to_string(), Value::Null),
        ];
        assert_eq!(free_name(&existing, "memory-cursor"), "memory-cursor-2");
        assert_eq!(free_name(&existing, "memory-zed"), "memory-zed");
    }
}
