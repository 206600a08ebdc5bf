//! `pegboard add`: a command, a URL, or a server of the MCP Registry, into the config.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use super::servers::{registry_url, secrets};
use crate::cli::AddArgs;
use crate::config_edit::ConfigEdit;
use crate::registry::RegistryClient;
use crate::registry::entry::{Converted, Wanted, convert};
use crate::registry::name::entry_name;

/// Run `pegboard add`.
pub async fn run(args: AddArgs) -> Result<i32> {
    let env = pairs(&args.env, '=', "--env", "NAME=VALUE")?;
    let from_registry = args.name.contains('/') && args.url.is_none() && args.command.is_empty();
    if from_registry {
        return add_from_registry(&args, &env).await;
    }
    if args.entry_name.is_some() || args.version.is_some() {
        bail!("--name and --version are for a registry server (a name with a `/`)");
    }
    check_name(&args.name)?;
    let entry = match (&args.url, args.command.split_first()) {
        (Some(_), Some(_)) => bail!("give either --url or a command after `--`, not both"),
        (None, None) => bail!(
            "say how to run `{}`: `pegboard add {0} -- COMMAND [ARGS...]`, `pegboard add {0} --url URL`, \
             or give a registry name such as io.github.owner/server",
            args.name
        ),
        (Some(url), None) => url_entry(url, &args.headers, &env)?,
        (None, Some((command, rest))) => {
            let mut entry = json!({ "command": command, "args": rest });
            if !env.is_empty() {
                entry["env"] = strings(&env);
            }
            if let Some(cwd) = &args.cwd {
                entry["cwd"] = Value::String(cwd.display().to_string());
            }
            entry
        }
    };
    let mut edit = ConfigEdit::open(args.config.config.as_deref())?;
    refuse_taken(&edit, &args.name)?;
    edit.insert(&args.name, entry.clone())?;
    let path = edit.path().to_path_buf();
    edit.save()?;
    println!(
        "added `{}` to {}: {}",
        args.name,
        path.display(),
        describe(&entry)
    );
    Ok(0)
}

/// `add` never replaces a server: `ConfigEdit::insert` would (connect and import rely on that).
fn refuse_taken(edit: &ConfigEdit, name: &str) -> Result<()> {
    if edit.entries().iter().any(|(taken, _)| taken == name) {
        bail!(
            "{}: a server named `{name}` already exists; remove it first (`pegboard remove {name}`) \
             or pick another name",
            edit.path().display()
        );
    }
    Ok(())
}

async fn add_from_registry(args: &AddArgs, env: &BTreeMap<String, String>) -> Result<i32> {
    if !args.headers.is_empty() || args.cwd.is_some() {
        bail!("--header and --cwd are not for a registry server; edit the entry after adding it");
    }
    let name = args
        .entry_name
        .clone()
        .unwrap_or_else(|| entry_name(&args.name));
    check_name(&name)?;
    let config = crate::commands::servers::config_path(&args.config);
    let registry = registry_url(args.registry.as_deref(), config.as_deref());
    let client = RegistryClient::new(&registry)?;
    let server = client.server(&args.name, args.version.as_deref()).await?;
    let mut used = Vec::new();
    let converted = convert(&server, &name, &mut |wanted: &Wanted<'_>| {
        if let Some(value) = env.get(wanted.name) {
            used.push(wanted.name.to_string());
            return Some(value.clone());
        }
        if wanted.required && std::io::stdin().is_terminal() {
            return ask(wanted);
        }
        None
    })?;
    for given in env.keys() {
        if !used.contains(given) {
            eprintln!(
                "note: --env {given}=... is not something `{}` asks for; ignored",
                args.name
            );
        }
    }
    // The file is locked only now: no lock is held across the network or a prompt.
    let mut edit = ConfigEdit::open(args.config.config.as_deref())?;
    refuse_taken(&edit, &name)?;
    edit.insert(&name, converted.entry.clone())?;
    let path = edit.path().to_path_buf();
    let stored = store_secrets(&converted, Some(&path))?;
    if let Err(e) = edit.save() {
        forget(&stored);
        return Err(e.into());
    }
    let version = server.version().unwrap_or("latest");
    println!(
        "added `{name}` ({} {version}) to {}: {}",
        server.name,
        path.display(),
        describe(&converted.entry)
    );
    for note in &converted.notes {
        eprintln!("  {note}");
    }
    if let Some((store, names)) = &stored {
        eprintln!(
            "  secrets stored in {}: {}",
            store.describe(),
            names.join(", ")
        );
    }
    Ok(0)
}

type Stored = Option<(pegboard_gateway::secrets::Secrets, Vec<String>)>;

/// Put the conversion's secrets into the store the config names.
fn store_secrets(converted: &Converted, config: Option<&Path>) -> Result<Stored> {
    if converted.secrets.is_empty() {
        return Ok(None);
    }
    let store = secrets(config)?;
    let mut names = Vec::new();
    for (name, value) in &converted.secrets {
        if let Err(e) = store.set(name, value) {
            forget(&Some((store.clone(), names)));
            return Err(e).with_context(|| format!("cannot store secret `{name}`"));
        }
        names.push(name.clone());
    }
    Ok(Some((store, names)))
}

/// Take back secrets stored for an entry that was not written.
fn forget(stored: &Stored) {
    if let Some((store, names)) = stored {
        for name in names {
            if let Err(e) = store.remove(name) {
                tracing::warn!("cannot take back secret `{name}`: {e}");
            }
        }
    }
}

/// Ask for one value on the terminal (without echo for a secret).
fn ask(wanted: &Wanted<'_>) -> Option<String> {
    let mut prompt = wanted.name.to_string();
    if let Some(d) = wanted.description {
        prompt.push_str(&format!(" ({d})"));
    }
    if !wanted.choices.is_empty() {
        prompt.push_str(&format!(" [{}]", wanted.choices.join("|")));
    }
    prompt.push_str(": ");
    let value = if wanted.secret {
        rpassword::prompt_password(prompt).ok()?
    } else {
        let mut err = std::io::stderr();
        let _ = err.write_all(prompt.as_bytes());
        let _ = err.flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).ok()?;
        line.trim_end_matches(['\r', '\n']).to_string()
    };
    (!value.is_empty()).then_some(value)
}

/// A `url` entry: the URL checked, `--header "K: V"` as headers (`--env` has no place there).
fn url_entry(url: &str, headers: &[String], env: &BTreeMap<String, String>) -> Result<Value> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        bail!("--url `{url}` must start with http:// or https://");
    }
    if !env.is_empty() {
        bail!("--env is for a command; a --url server takes --header \"NAME: VALUE\"");
    }
    let headers = pairs(headers, ':', "--header", "NAME: VALUE")?;
    let mut entry = json!({ "url": url });
    if !headers.is_empty() {
        entry["headers"] = strings(&headers);
    }
    Ok(entry)
}

/// `K=V` (or `K: V`) options as a map; a repeated name keeps the last value.
fn pairs(
    values: &[String],
    separator: char,
    flag: &str,
    shape: &str,
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for value in values {
        let Some((key, rest)) = value.split_once(separator) else {
            bail!("{flag} `{value}`: write {shape}");
        };
        let key = key.trim();
        if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            bail!("{flag} `{value}`: the name before `{separator}` is empty or has spaces");
        }
        let rest = if separator == ':' { rest.trim() } else { rest };
        out.insert(key.to_string(), rest.to_string());
    }
    Ok(out)
}

fn strings(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<_, _>>(),
    )
}

/// An entry's name must be usable as a key and a namespace.
fn check_name(name: &str) -> Result<()> {
    if name.trim().is_empty()
        || name.contains('/')
        || name.chars().any(char::is_control)
        || name.len() > 100
    {
        bail!("`{name}` cannot name an entry: use letters, digits, `-` and `_` (at most 100)");
    }
    Ok(())
}

/// `npx -y pkg`, or the URL: what the entry runs, in one line.
fn describe(entry: &Value) -> String {
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return url.to_string();
    }
    let mut words = vec![entry["command"].as_str().unwrap_or("").to_string()];
    if let Some(args) = entry["args"].as_array() {
        words.extend(args.iter().filter_map(Value::as_str).map(str::to_string));
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_need_a_name_and_separator() {
        let env = pairs(&["A=1".into(), "B=x=y".into()], '=', "--env", "NAME=VALUE").expect("ok");
        assert_eq!(env["B"], "x=y");
        assert!(pairs(&["novalue".into()], '=', "--env", "NAME=VALUE").is_err());
        assert!(pairs(&["=v".into()], '=', "--env", "NAME=VALUE").is_err());
        let headers = pairs(
            &["Authorization: Bearer x".into()],
            ':',
            "--header",
            "NAME: VALUE",
        )
        .expect("ok");
        assert_eq!(headers["Authorization"], "Bearer x");
    }

    #[test]
    fn names() {
        assert!(check_name("memory").is_ok());
        assert!(check_name("a/b").is_err());
        assert!(check_name(" ").is_err());
    }
}
