//! `pegboard secret set|list|rm`: the secrets a config refers to as `${secret:NAME}`.

use std::io::{BufRead, IsTerminal};

use anyhow::{Result, bail};
use pegboard_gateway::secrets::is_secret_name;

use super::servers::{config_path, secrets};
use crate::cli::{SecretAction, SecretArgs};

/// Run `pegboard secret`.
pub fn run(args: SecretArgs) -> Result<i32> {
    let config = config_path(&args.config);
    match args.action {
        SecretAction::Set { name } => {
            check(&name)?;
            let value = read_value(&name)?;
            let store = secrets(config.as_deref())?;
            store.set(&name, &value)?;
            eprintln!("stored secret `{name}` in {}", store.describe());
            Ok(0)
        }
        SecretAction::List => {
            for name in secrets(config.as_deref())?.names()? {
                println!("{name}");
            }
            Ok(0)
        }
        SecretAction::Rm { name } => {
            check(&name)?;
            let store = secrets(config.as_deref())?;
            if !store.remove(&name)? {
                bail!("no secret named `{name}` in {}", store.describe());
            }
            eprintln!("forgot secret `{name}`");
            Ok(0)
        }
    }
}

fn check(name: &str) -> Result<()> {
    if !is_secret_name(name) {
        bail!(
            "`{name}` is not a secret name: use letters, digits, `_`, `-` and `.` (e.g. ENTRY.VAR)"
        );
    }
    Ok(())
}

/// The value: asked without echo on a terminal, else the first line of stdin.
fn read_value(name: &str) -> Result<String> {
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("{name}: "))?
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_string()
    };
    if value.is_empty() {
        bail!("no value given for `{name}`; nothing stored");
    }
    Ok(value)
}
