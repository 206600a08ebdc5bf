//! `pegboard pin`: write `pegboard.lock`, show what differs from it (`--diff`), accept changes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Result, bail};
use pegboard_gateway::pins::accept::{self, Selector};
use pegboard_gateway::pins::diff::{self, Change, Observed};
use pegboard_gateway::pins::lock::{self, LOCK_VERSION, Lock};
use pegboard_gateway::pins::{Kind, Report};

use pegboard_gateway::Progress;

use super::{fill_board_from, gateway_for, load_config};
use crate::cli::PinArgs;

/// Run `pegboard pin`; the exit code is 1 when the servers differ from the lock (without
/// `--accept`), else 0.
pub async fn run(args: PinArgs, progress: Progress) -> Result<i32> {
    let selector = match (&args.accept, args.all) {
        (Some(Some(name)), false) => Some(Selector::Name(name.clone())),
        (Some(Some(_)), true) => bail!("--accept takes a NAME or --all, not both"),
        (_, true) => Some(Selector::All),
        (Some(None), false) => {
            bail!(
                "say what to accept: --accept NAME (a tool or prompt), --accept SERVER, or --accept --all"
            )
        }
        (None, false) => None,
    };
    let mut config = load_config(args.config.config.as_deref(), args.config.strict)?;
    let path: PathBuf = args
        .lock
        .clone()
        .unwrap_or_else(|| config.lock_file.clone());
    let existing = lock::read(&path)?;
    // Nothing is compared or hidden while pinning: every listing is recorded as the server sends it.
    config = config.without_pins();
    let reports: Vec<(String, Report)> = config
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.guards.report.clone()))
        .collect();
    let gateway = fill_board_from(gateway_for(config, &args.config, progress)).await?;
    // Prompts are listed on demand: list them once so their listing is recorded too.
    gateway.board().list_prompts().await;
    let started = gateway.started().unwrap_or_default();
    let mut observed: BTreeMap<String, Observed> = BTreeMap::new();
    for ((name, report), start) in reports.iter().zip(&started) {
        if start.result.is_ok() {
            observed.insert(name.clone(), Observed::from_report(report));
        } else {
            eprintln!("pegboard: server `{name}` did not start; its pins stay as they are");
        }
    }
    gateway.shutdown().await;

    let code = match (existing, selector) {
        (None, None | Some(Selector::All)) => {
            let mut fresh = Lock {
                pegboard_lock: LOCK_VERSION,
                ..Lock::default()
            };
            accept::accept(&mut fresh, &observed, &Selector::All)?;
            lock::write(&path, &fresh)?;
            let (tools, prompts) = count(&fresh);
            println!(
                "wrote {}: {tools} tool{} and {prompts} prompt{} of {} server{}",
                path.display(),
                plural(tools),
                plural(prompts),
                fresh.servers.len(),
                plural(fresh.servers.len())
            );
            0
        }
        (None, Some(Selector::Name(_))) => {
            bail!(
                "there is no lock at {} yet: run `pegboard pin` first",
                path.display()
            )
        }
        (Some(mut current), Some(selector)) => {
            let done = accept::accept(&mut current, &observed, &selector)?;
            if done.is_empty() {
                println!("nothing to accept: the lock already pins what is offered");
            } else {
                current.pegboard_lock = LOCK_VERSION;
                lock::write(&path, &current)?;
                for line in &done {
                    println!("{line}");
                }
                println!(
                    "updated {}; reload a running `pegboard serve` (SIGHUP) to use it",
                    path.display()
                );
            }
            0
        }
        (Some(current), None) => {
            let differing = report_changes(&current, &observed, args.diff);
            if differing == 0 {
                println!("every server matches {}", path.display());
                0
            } else {
                if !args.diff {
                    println!(
                        "review with `pegboard pin --diff`; accept with `pegboard pin --accept NAME|SERVER|--all`"
                    );
                }
                1
            }
        }
    };
    Ok(code)
}

/// Print each server's differences (as unified diffs with `diffs`); returns how many there are.
fn report_changes(current: &Lock, observed: &BTreeMap<String, Observed>, diffs: bool) -> usize {
    let mut total = 0;
    for (server, now) in observed {
        let changes = diff::changes(current.servers.get(server), now);
        total += changes.len();
        if diffs {
            if let (Some(was), Some(is)) = (
                current.servers.get(server).and_then(|p| p.server.as_ref()),
                now.server.as_ref(),
            ) && was != is
            {
                println!(
                    "server `{server}`: pinned as {} {}, now {} {}",
                    was.name, was.version, is.name, is.version
                );
            }
            for change in &changes {
                print!("{}", diff::unified(server, change));
            }
            continue;
        }
        if changes.is_empty() {
            continue;
        }
        let list = |pick: fn(&Change) -> bool| -> String {
            changes
                .iter()
                .filter(|c| pick(c))
                .map(|c| {
                    let (kind, name) = c.item();
                    match kind {
                        Kind::Tool => name.to_string(),
                        Kind::Prompt => format!("{name} (prompt)"),
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        for (label, pick) in [
            (
                "changed",
                (|c: &Change| matches!(c, Change::Changed { .. })) as fn(&Change) -> bool,
            ),
            ("new", |c: &Change| matches!(c, Change::New { .. })),
            ("gone", |c: &Change| matches!(c, Change::Gone { .. })),
        ] {
            let names = list(pick);
            if !names.is_empty() {
                parts.push(format!("{label}: {names}"));
            }
        }
        println!("{server}: {}", parts.join("; "));
    }
    total
}

fn count(lock: &Lock) -> (usize, usize) {
    lock.servers
        .values()
        .fold((0, 0), |(t, p), s| (t + s.tools.len(), p + s.prompts.len()))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
