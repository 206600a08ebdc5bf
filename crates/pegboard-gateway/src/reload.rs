//! Config reload for `pegboard serve`: on SIGHUP the config file is read again and the running servers are
//! brought in line with it, one server at a time.
//!
//! Entries are matched by name. One whose whole config is unchanged keeps running untouched (same process,
//! same board index, so clients see no change for it); a removed one is stopped; an added one is started
//! as at startup; a changed one (any field differs) is stopped, then started with its new config. An
//! unchanged entry that is not running (it failed to start, or exited under `--no-restart`) is tried again.
//! A config that does not load changes nothing. Downstream clients get `tools/list_changed` from the board
//! server whenever the set of tools changes.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use pegboard::{PegBoard, ServiceState};

use crate::config::{Config, ServerConfig};
use crate::connect::{self, Outcome, Progress, Started};
use crate::supervise::{Supervised, Supervisors};

/// The servers `pegboard serve` runs, by config entry, and how to reach each on the board.
pub struct Fleet {
    board: PegBoard,
    handshake_timeout: Duration,
    /// `None` with `--no-restart`.
    supervisors: Option<Supervisors>,
    /// In config order.
    members: Vec<Member>,
    /// Set on every server of a reloaded config (a command-line setting outlives reloads).
    max_message: Option<usize>,
    /// `--max-result-tokens`, set on every server of a reloaded config likewise.
    max_result_tokens: Option<usize>,
}

struct Member {
    config: ServerConfig,
    state: State,
}

enum State {
    /// On the board, restarted by its supervisor when it dies (which changes its index).
    Supervised(Supervised),
    /// On the board at this index, not restarted (`--no-restart`); it may have exited since.
    Unsupervised(usize),
    /// Not on the board: it failed to start.
    Down,
}

impl Fleet {
    /// Take over what startup did: `started` holds one outcome per server of `config`, in order.
    /// With `restart`, every server that started gets a supervisor.
    pub fn new(
        board: &PegBoard,
        config: &Config,
        started: Started,
        handshake_timeout: Duration,
        restart: bool,
    ) -> Self {
        let mut fleet = Self {
            board: board.clone(),
            handshake_timeout,
            supervisors: restart.then(|| Supervisors::new(board, handshake_timeout)),
            members: Vec::new(),
            max_message: None,
            max_result_tokens: None,
        };
        fleet.members = started
            .outcomes
            .into_iter()
            .zip(&config.servers)
            .map(|(outcome, server)| fleet.member(server.clone(), outcome))
            .collect();
        fleet
    }

    /// Give every server of a reloaded config whose entry sets no `maxMessageMib` this limit, as
    /// the command line gave it to the servers first started ([`Config::with_max_message`]).
    #[must_use]
    pub fn with_max_message(mut self, bytes: usize) -> Self {
        self.max_message = Some(bytes);
        self
    }

    /// Cap the results of every server of a reloaded config whose entry sets no
    /// `maxResultTokens` (`--max-result-tokens`; `None`: no cap from the command line).
    #[must_use]
    pub fn with_max_result_tokens(mut self, tokens: Option<usize>) -> Self {
        self.max_result_tokens = tokens;
        self
    }

    fn member(&self, config: ServerConfig, outcome: Outcome) -> Member {
        let waits_for_login = outcome
            .result
            .as_ref()
            .err()
            .and_then(crate::oauth::needs_login)
            .is_some();
        let state = match (outcome.index, &self.supervisors) {
            // Started once its login is done (see `crate::oauth`).
            (None, Some(supervisors)) if waits_for_login => {
                State::Supervised(supervisors.spawn_waiting_for_login(&config))
            }
            (None, _) => State::Down,
            (Some(index), Some(supervisors)) => {
                State::Supervised(supervisors.spawn(&config, index, outcome.stderr))
            }
            (Some(index), None) => State::Unsupervised(index),
        };
        Member { config, state }
    }

    /// Whether the member is running, or being kept running by its supervisor (then a reload leaves the
    /// restarting to it rather than starting a second copy).
    fn is_up(&self, member: &Member) -> bool {
        match &member.state {
            State::Supervised(_) => true,
            State::Unsupervised(index) => self
                .board
                .services()
                .iter()
                .any(|s| s.index == *index && s.state == ServiceState::Running),
            State::Down => false,
        }
    }

    /// Each entry's name, where it is on the board now (`None`: not on it) and whether a
    /// supervisor keeps it running, in config order.
    pub fn placement(&self) -> Vec<(String, Option<usize>, bool)> {
        self.members
            .iter()
            .map(|m| {
                let (index, supervised) = match &m.state {
                    State::Supervised(s) => (s.index(), true),
                    State::Unsupervised(index) => (Some(*index), false),
                    State::Down => (None, false),
                };
                (m.config.name.clone(), index, supervised)
            })
            .collect()
    }

    /// How many entries are on the board now (not counting ones waiting for a restart).
    pub fn running(&self) -> usize {
        self.members
            .iter()
            .filter(|m| match &m.state {
                State::Supervised(s) => s.is_up(),
                _ => self.is_up(m),
            })
            .count()
    }

    /// Bring the running servers in line with `new` (see the module docs); returns what changed.
    ///
    /// Servers are stopped before new ones start, so a changed entry may keep its namespace (its tools
    /// would clash with the old copy's otherwise). Starting reports progress like startup does.
    pub async fn reload(&mut self, new: &Config, progress: Progress) -> Changes {
        let limited;
        let new = match (self.max_message, self.max_result_tokens) {
            (None, None) => new,
            (bytes, tokens) => {
                let mut config = new.clone();
                if let Some(bytes) = bytes {
                    config = config.with_max_message(bytes);
                }
                if let Some(tokens) = tokens {
                    config = config.with_max_result_tokens(tokens);
                }
                limited = config;
                &limited
            }
        };
        let old: Vec<(&ServerConfig, bool)> = self
            .members
            .iter()
            .map(|m| (&m.config, self.is_up(m)))
            .collect();
        let mut changes = diff(&old, &new.servers);
        let starting: HashSet<String> = changes.to_start().map(str::to_string).collect();

        // Every member that is not kept as it is goes: removed, changed, or down and tried again.
        let mut kept: HashMap<String, Member> = HashMap::new();
        let mut outgoing = Vec::new();
        for member in std::mem::take(&mut self.members) {
            let in_new = new.servers.iter().any(|s| s.name == member.config.name);
            // Names are unique (the loader refuses a repeated key); should two members share one anyway,
            // the second cannot be told apart and goes rather than leak.
            if in_new
                && !starting.contains(&member.config.name)
                && !kept.contains_key(&member.config.name)
            {
                kept.insert(member.config.name.clone(), member);
            } else {
                outgoing.push(member);
            }
        }
        let stopped = futures::future::join_all(outgoing.into_iter().map(stop)).await;
        for (name, index) in stopped {
            let Some(index) = index else { continue };
            match self.board.remove_service(index) {
                Ok(tools) => tracing::debug!(server = %name, tools, "stopped by reload"),
                // Already gone (it was removed when it died): nothing left to stop.
                Err(e) => tracing::debug!(server = %name, "nothing to remove: {e}"),
            }
        }

        let to_start = Config {
            source: new.source.clone(),
            servers: new
                .servers
                .iter()
                .filter(|s| starting.contains(&s.name))
                .cloned()
                .collect(),
            warnings: Vec::new(),
            skipped: Vec::new(),
            tool_search: new.tool_search.clone(),
            code_mode: new.code_mode.clone(),
            lock_file: new.lock_file.clone(),
            access: None,
            // The store is opened once, at startup: a reload does not move it.
            store: None,
        };
        let started =
            connect::start_all(&self.board, &to_start, self.handshake_timeout, progress).await;
        // Each failure is already reported on its own line by `start_all`; list the names in the summary.
        changes.failed = started
            .outcomes
            .iter()
            .filter(|o| o.result.is_err())
            .map(|o| o.name.clone())
            .collect();
        // One outcome per entry of `to_start`, in the same order.
        let mut fresh = started.outcomes.into_iter();
        for server in &new.servers {
            if starting.contains(&server.name) {
                if let Some(outcome) = fresh.next() {
                    let member = self.member(server.clone(), outcome);
                    self.members.push(member);
                }
            } else if let Some(member) = kept.remove(&server.name) {
                self.members.push(member);
            }
        }
        changes
    }

    /// Stop every supervisor and wait for them; the board itself is left to the caller to shut down.
    pub async fn shutdown(self) {
        if let Some(supervisors) = self.supervisors {
            supervisors.stop_all().await;
        }
    }
}

/// Stop what keeps `member` running; returns its name and where it is on the board (for removal).
async fn stop(member: Member) -> (String, Option<usize>) {
    let index = match member.state {
        State::Supervised(supervised) => supervised.stop().await,
        State::Unsupervised(index) => Some(index),
        State::Down => None,
    };
    (member.config.name, index)
}

/// What a reload does, by entry name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// New entries, started.
    pub added: Vec<String>,
    /// Entries no longer in the config, stopped.
    pub removed: Vec<String>,
    /// Entries whose config differs: stopped, then started again.
    pub changed: Vec<String>,
    /// Unchanged entries that were not running: started again.
    pub retried: Vec<String>,
    /// Unchanged entries left running as they are.
    pub unchanged: usize,
    /// Of the entries started, those that did not start (they are tried again at the next reload).
    pub failed: Vec<String>,
}

impl Changes {
    /// The entries to start, whatever the reason.
    fn to_start(&self) -> impl Iterator<Item = &str> {
        self.added
            .iter()
            .chain(&self.changed)
            .chain(&self.retried)
            .map(String::as_str)
    }
}

impl fmt::Display for Changes {
    /// `+added, -removed, ~changed, +retried (retry), N unchanged (failed, ... failed to start)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.added.iter().map(|n| format!("+{n}")));
        parts.extend(self.removed.iter().map(|n| format!("-{n}")));
        parts.extend(self.changed.iter().map(|n| format!("~{n}")));
        parts.extend(self.retried.iter().map(|n| format!("+{n} (retry)")));
        if parts.is_empty() {
            parts.push("no changes".to_string());
        }
        parts.push(format!("{} unchanged", self.unchanged));
        f.write_str(&parts.join(", "))?;
        if !self.failed.is_empty() {
            write!(f, " ({} failed to start)", self.failed.join(", "))?;
        }
        Ok(())
    }
}

/// Compare the running entries (`old`: config and whether it is up) with the new config, by name.
fn diff(old: &[(&ServerConfig, bool)], new: &[ServerConfig]) -> Changes {
    let mut changes = Changes::default();
    for server in new {
        match old.iter().find(|(o, _)| o.name == server.name) {
            None => changes.added.push(server.name.clone()),
            Some((o, _)) if *o != server => changes.changed.push(server.name.clone()),
            Some((_, false)) => changes.retried.push(server.name.clone()),
            Some((_, true)) => changes.unchanged += 1,
        }
    }
    for (o, _) in old {
        if !new.iter().any(|s| s.name == o.name) {
            changes.removed.push(o.name.clone());
        }
    }
    changes
}

/// SIGHUP, listened for from the start of `serve`: once a handler is installed the signal no longer
/// terminates the process (its default), so a SIGHUP during startup is kept for after it instead.
pub struct Hangup {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Hangup {
    /// Start listening. Without it (not Unix, or the handler cannot be installed) reload is unavailable.
    pub fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let signal = match signal(SignalKind::hangup()) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!("cannot listen for SIGHUP, config reload is off: {e}");
                    None
                }
            };
            Self { signal }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The next SIGHUP (several in a row count as one); never resolves when there is no listener.
    /// The next SIGHUP (never, when it could not be listened for).
    pub(crate) async fn recv(&mut self) {
        #[cfg(unix)]
        if let Some(signal) = &mut self.signal
            && signal.recv().await.is_some()
        {
            return;
        }
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Transport;

    fn server(name: &str, arg: &str) -> ServerConfig {
        ServerConfig {
            name: name.to_string(),
            namespace: Some(name.to_string()),
            transport: Transport::Stdio {
                command: "x".into(),
                args: vec![arg.into()],
                env: Default::default(),
                cwd: None,
            },
            allow: None,
            deny: Vec::new(),
            timeout: None,
            max_message: None,
            session: crate::config::SessionMode::Shared,
            guards: Default::default(),
        }
    }

    #[test]
    fn diff_by_name_and_whole_config() {
        let (a, b, c, d) = (
            server("a", "1"),
            server("b", "1"),
            server("c", "1"),
            server("d", "1"),
        );
        let old = [(&a, true), (&b, true), (&c, true), (&d, false)];
        let new = [
            server("a", "1"),
            server("c", "2"),
            server("d", "1"),
            server("e", "1"),
        ];
        let mut changes = diff(&old, &new);
        assert_eq!(
            changes,
            Changes {
                added: vec!["e".into()],
                removed: vec!["b".into()],
                changed: vec!["c".into()],
                retried: vec!["d".into()],
                unchanged: 1,
                failed: Vec::new(),
            }
        );
        assert_eq!(changes.to_string(), "+e, -b, ~c, +d (retry), 1 unchanged");
        let mut start: Vec<&str> = changes.to_start().collect();
        start.sort_unstable();
        assert_eq!(start, ["c", "d", "e"]);
        changes.failed = vec!["e".into()];
        assert_eq!(
            changes.to_string(),
            "+e, -b, ~c, +d (retry), 1 unchanged (e failed to start)"
        );
    }

    #[test]
    fn a_changed_namespace_filter_or_session_counts_as_changed() {
        let a = server("a", "1");
        let mut renamed = a.clone();
        renamed.namespace = Some("other".into());
        let mut filtered = a.clone();
        filtered.deny = vec!["rm".into()];
        let mut own = a.clone();
        own.session = crate::config::SessionMode::PerClient;
        for new in [renamed, filtered, own] {
            let changes = diff(&[(&a, true)], std::slice::from_ref(&new));
            assert_eq!(changes.changed, ["a"]);
            assert_eq!(changes.unchanged, 0);
        }
    }

    #[test]
    fn nothing_changed_reads_so() {
        let a = server("a", "1");
        let changes = diff(&[(&a, true)], std::slice::from_ref(&a));
        assert_eq!(changes.to_string(), "no changes, 1 unchanged");
    }
}
