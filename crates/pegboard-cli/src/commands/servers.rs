//! `pegboard remove|enable|disable NAME`, and what the commands that edit the config share:
//! the top-level settings they read (`registry`, `credentials`) and the secret store.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use pegboard_gateway::config::CredentialsBackend;
use pegboard_gateway::secrets::Secrets;

use crate::cli::{EditConfigArgs, EntryArgs};
use crate::config_edit::ConfigEdit;
use crate::registry::DEFAULT_REGISTRY;

/// `pegboard remove NAME`.
pub fn remove(args: &EntryArgs) -> Result<i32> {
    let mut edit = ConfigEdit::open(Some(&existing(&args.config)?))?;
    let entry = edit.remove(&args.name)?;
    let path = edit.path().to_path_buf();
    edit.save()?;
    println!("removed `{}` from {}", args.name, path.display());
    let secrets = secret_references(&entry.to_string());
    if !secrets.is_empty() {
        eprintln!(
            "its secrets stay in the store (other entries may use them): forget each with `pegboard secret rm NAME` ({})",
            secrets.join(", ")
        );
    }
    Ok(0)
}

/// `pegboard enable NAME` / `pegboard disable NAME`.
pub fn set_disabled(args: &EntryArgs, disabled: bool) -> Result<i32> {
    let mut edit = ConfigEdit::open(Some(&existing(&args.config)?))?;
    edit.set_disabled(&args.name, disabled)?;
    let path = edit.path().to_path_buf();
    edit.save()?;
    let what = if disabled { "disabled" } else { "enabled" };
    println!("{what} `{}` in {}", args.name, path.display());
    Ok(0)
}

/// The names of the `${secret:NAME}` references in `text`, in order, each once.
fn secret_references(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for part in text.split("${secret:").skip(1) {
        let name: String = part
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .collect();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The config these commands change: it must exist (`add` alone creates one).
fn existing(args: &EditConfigArgs) -> Result<PathBuf> {
    Ok(pegboard_gateway::config::locate(args.config.as_deref())?)
}

/// The config file as given or found, if there is one (for the settings below).
pub fn config_path(args: &EditConfigArgs) -> Option<PathBuf> {
    pegboard_gateway::config::locate(args.config.as_deref()).ok()
}

/// A top-level string setting of the config at `path` (`registry`, `credentials`).
pub fn setting(path: Option<&Path>, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path?).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get(key)?.as_str().map(str::to_string)
}

/// The registry to use: `--registry` / `PEGBOARD_REGISTRY`, else the config's `registry`, else
/// the official one.
pub fn registry_url(flag: Option<&str>, config: Option<&Path>) -> String {
    flag.map(str::to_string)
        .or_else(|| setting(config, "registry"))
        .unwrap_or_else(|| DEFAULT_REGISTRY.to_string())
}

/// The secret store the config's `credentials` names (the keyring when one answers by default).
pub fn secrets(config: Option<&Path>) -> Result<Secrets> {
    let backend = match setting(config, "credentials") {
        Some(value) => CredentialsBackend::parse(&value).map_err(anyhow::Error::msg)?,
        None => CredentialsBackend::Auto,
    };
    Secrets::open(backend).context("cannot open the secret store")
}

#[cfg(test)]
mod tests {
    use super::secret_references;

    #[test]
    fn secret_references_are_found_once_each() {
        let text = r#"{"env": {"A": "${secret:x.A}", "B": "${secret:x.B:-d}", "C": "${secret:x.A}", "D": "${HOME}"}}"#;
        assert_eq!(secret_references(text), ["x.A", "x.B"]);
    }
}
