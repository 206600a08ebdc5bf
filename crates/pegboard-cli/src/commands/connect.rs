//! `pegboard connect CLIENT`: the `pegboard` entry in the client's file.

use anyhow::Result;

use crate::cli::{ConnectArgs, Scope};
use crate::clients::connect::{Target, connect};
use crate::clients::convert::Launch;
use crate::clients::known::Env;
use crate::clients::{ClientError, client_named};
use crate::config_edit::ConfigEdit;

/// Run `pegboard connect`.
pub fn run(args: ConnectArgs) -> Result<i32> {
    let client = client_named(&args.client)?;
    let cwd = std::env::current_dir()?;
    let project = (args.scope == Scope::Project).then_some(cwd.as_path());
    let target = Target::new(client, project, &Env::from_process())?;
    // Checked before pegboard's config is opened (and perhaps created).
    crate::safe_write::ensure_writable(&target.path)?;
    target.open()?;
    let config = ConfigEdit::open(args.config.as_deref())?;
    let launch = match &args.http {
        Some(url) => Launch::Http {
            url: url.clone(),
            token_env: args.token_env.clone(),
        },
        None => {
            let exe = std::env::current_exe().map_err(ClientError::CurrentExe)?;
            let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
            let mut serve = vec![
                "serve".to_string(),
                "--config".to_string(),
                config.path().display().to_string(),
            ];
            if let Some(name) = &args.as_client {
                serve.extend(["--client".to_string(), name.clone()]);
            }
            Launch::Stdio {
                command: exe.display().to_string(),
                args: serve,
            }
        }
    };
    let config_path = config.path().to_path_buf();
    let done = connect(config, &target, &launch, args.move_servers)?;
    let mut out = String::new();
    for line in &done.imported {
        out.push_str(&line.render());
        out.push('\n');
    }
    if !done.moved.is_empty() {
        out.push_str(&format!(
            "moved behind pegboard ({}): {}\n",
            config_path.display(),
            done.moved.join(", ")
        ));
    }
    let how = match &launch {
        Launch::Stdio { .. } => format!("starts pegboard serve --config {}", config_path.display()),
        Launch::Http { url, .. } => format!("connects to {url}"),
    };
    if done.written {
        out.push_str(&format!(
            "{}: connected ({}); {how}\n",
            client.name(),
            target.path.display()
        ));
    } else {
        out.push_str(&format!(
            "{}: already connected ({})\n",
            client.name(),
            target.path.display()
        ));
    }
    crate::output::print(&out)?;
    Ok(i32::from(done.imported.iter().any(|l| !l.in_pegboard())))
}
