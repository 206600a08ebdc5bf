//! Sessions any replica can serve: what the store keeps of each HTTP session, and rmcp's
//! [`SessionStore`] over it.
//!
//! A session is a hash at `PREFIX:session:ID`: `client` (the named client that opened it: only
//! it may use it, on any replica), `init` (its `initialize` parameters, JSON: protocol version,
//! client info and capabilities, which rmcp replays to adopt it), and when set `level` (its
//! `logging/setLevel`), `subs` (the resources it subscribed to, a JSON array) and `told` (what
//! it was last answered of each list, JSON: `{"tools": FINGERPRINT, "prompts": [SERVER, ...],
//! "resources": [SERVER, ...]}`, a list it never asked for left out; see `store/listed.rs`). Its
//! TTL is the idle expiry (`--session-idle`), slid forward while the session is used.
//!
//! The replica that holds a session serves it without asking the store: the only round trips
//! are writes when something of it changes (the handshake, a log level, a subscription, a list
//! answered otherwise than last time), made
//! beside the request (the handshake's is awaited once, before the answer that names the
//! session, so any replica can adopt it from the client's next request), and a sweep every
//! quarter of the idle time (at most 5 s apart) that restates the TTL of every session held here
//! from its last use (one pipelined round trip for all of them) and writes back whole any whose
//! write failed while the store was down, or that the store no longer has (it restarted empty). A replica asked for a session it does not hold reads it
//! ([`StoredSessions::fetch`], in `http/sessions.rs`), checks its client, and lets rmcp restore
//! it (its handshake replayed, `load` answering from what was just read); its log level and
//! subscriptions are applied when the replayed handshake ends ([`StoredSessions::take_adopted`]),
//! and it is told `list_changed` for each list it had listed that this replica would answer
//! otherwise (`server/told_store.rs`).
//!
//! A session is deleted from the store only when its client ends it (`DELETE`) or its TTL runs
//! out; a replica that stops (drain, restart) or closes its copy (idle here, evicted) only
//! forgets it, so another replica can adopt it.

// `logging/setLevel` is SEP-2577 legacy, live in 2025-11-25: its level is part of a session.
#![allow(deprecated)]

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use foldhash::fast::RandomState;
use rmcp::model::{InitializeRequestParams, LoggingLevel};
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use super::listed::Listed;
use super::{Store, StoreError};

/// The kind of key a session is kept under (`PREFIX:session:ID`).
const KIND: &str = "session";

/// What the store keeps of one session.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    /// The name of the client that opened it.
    pub(crate) client: String,
    /// Its `initialize` parameters, as JSON.
    init: String,
    /// Its log level, if it set one.
    pub(crate) level: Option<LoggingLevel>,
    /// The resource URIs it subscribed to.
    pub(crate) subscriptions: BTreeSet<String>,
    /// What it was last answered of each list.
    pub(crate) listed: Listed,
}

/// What an adopted session gets back once its replayed handshake ends.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Adopted {
    /// Its log level.
    pub(crate) level: Option<LoggingLevel>,
    /// Its subscriptions.
    pub(crate) subscriptions: BTreeSet<String>,
    /// What it was last answered of each list.
    pub(crate) listed: Listed,
}

/// A session held here, as the store should have it.
#[derive(Debug)]
struct Held {
    record: Record,
    /// A write of it failed: write it whole at the next sweep.
    dirty: bool,
    /// When a request of it last went through here (its TTL is the idle time left from then).
    last_used: Instant,
}

/// The store's sessions (see the module docs).
pub(crate) struct StoredSessions {
    store: Store,
    /// The idle expiry: the TTL of every session's key.
    idle: Duration,
    /// Sessions held here.
    held: Mutex<HashMap<Arc<str>, Held, RandomState>>,
    /// What the adoption check read, for rmcp's `load` that follows it (`None`: not there).
    fetched: Mutex<HashMap<String, Option<Record>, RandomState>>,
    /// `initialize` parameters rmcp handed over, until the session's record is written.
    fresh: Mutex<HashMap<String, String, RandomState>>,
    /// Adopted sessions' log levels, subscriptions and lists, until their handshake ends.
    adopted: Mutex<HashMap<String, Adopted, RandomState>>,
}

impl std::fmt::Debug for StoredSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredSessions")
            .field("store", &self.store)
            .field("idle", &self.idle)
            .finish_non_exhaustive()
    }
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn level_name(level: LoggingLevel) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl StoredSessions {
    /// The sessions of `store`, each kept `idle` after its last use.
    pub(crate) fn new(store: Store, idle: Duration) -> Arc<Self> {
        Arc::new(Self {
            store,
            idle,
            held: Mutex::default(),
            fetched: Mutex::default(),
            fresh: Mutex::default(),
            adopted: Mutex::default(),
        })
    }

    /// The store.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    fn key(&self, id: &str) -> String {
        self.store.key(KIND, id)
    }

    fn ttl_secs(&self) -> i64 {
        ttl_of(self.idle)
    }

    /// Read session `id` from the store: `None` when it is not there (never was, ended, expired).
    ///
    /// # Errors
    /// The store failed or did not answer in time (counted and logged).
    pub(crate) async fn fetch(&self, id: &str) -> Result<Option<Record>, StoreError> {
        let key = self.key(id);
        let fields: HashMap<String, String> = self
            .store
            .round_trip_again("reading a session to take it over", || {
                let mut connection = self.store.connection();
                let key = &key;
                async move {
                    redis::cmd("HGETALL")
                        .arg(key)
                        .query_async(&mut connection)
                        .await
                }
            })
            .await?;
        if fields.is_empty() {
            return Ok(None);
        }
        match parse(fields) {
            Ok(record) => Ok(Some(record)),
            Err(reason) => {
                let error = StoreError::Unreadable { key, reason };
                self.store.failed(&error);
                Ok(None)
            }
        }
    }

    /// Keep what the adoption check read of `id` for rmcp's `load` that follows.
    pub(crate) fn stash(&self, id: &str, record: Option<Record>) {
        locked(&self.fetched).insert(id.to_string(), record);
    }

    /// Drop what [`stash`](Self::stash) kept of `id` if rmcp did not take it (a concurrent
    /// request restored the session first).
    pub(crate) fn unstash(&self, id: &str) {
        locked(&self.fetched).remove(id);
    }

    /// The log level, subscriptions and lists of the adopted session `id`, once (its handshake
    /// ended).
    pub(crate) fn take_adopted(&self, id: &str) -> Option<Adopted> {
        locked(&self.adopted).remove(id)
    }

    /// Session `id`, just opened here by `client`, is written to the store (its `initialize`
    /// parameters were handed over by rmcp a moment before). Awaited before the answer that
    /// names the session goes out, so the client's next request may go to any replica. A failed
    /// write is written again by the sweep; the session is served here meanwhile.
    pub(crate) async fn opened(&self, id: &str, client: &str) {
        let Some(init) = locked(&self.fresh).remove(id) else {
            return;
        };
        let record = Record {
            client: client.to_string(),
            init,
            level: None,
            subscriptions: BTreeSet::new(),
            listed: Listed::default(),
        };
        let written = self.write_whole(id, &record, self.idle).await.is_ok();
        locked(&self.held).insert(
            Arc::from(id),
            Held {
                record,
                dirty: !written,
                last_used: Instant::now(),
            },
        );
    }

    /// A request of session `id`, held here, went through: its TTL is slid at the next sweep.
    pub(crate) fn used(&self, id: &str) {
        if let Some(held) = locked(&self.held).get_mut(id) {
            held.last_used = Instant::now();
        }
    }

    /// Session `id` set its log level: written beside the request.
    pub(crate) fn level_set(self: &Arc<Self>, id: &str, level: LoggingLevel) {
        let value = level_name(level);
        self.change(
            id,
            |r| {
                r.level = Some(level);
                Some(value)
            },
            "level",
        );
    }

    /// Session `id` subscribed to `uri` (`on: true`) or unsubscribed: written beside the request.
    pub(crate) fn subscription(self: &Arc<Self>, id: &str, uri: &str, on: bool) {
        let edit = |r: &mut Record| {
            if on {
                r.subscriptions.insert(uri.to_string());
            } else {
                r.subscriptions.remove(uri);
            }
            Some(serde_json::to_string(&r.subscriptions).unwrap_or_default())
        };
        self.change(id, edit, "subs");
    }

    /// Session `id` is answered a list: `update` brings what it was last answered up to date,
    /// and says whether that changed. Written beside the request only then (a client that lists
    /// the same tools again costs no round trip); a session not held here is left alone.
    pub(crate) fn listed(self: &Arc<Self>, id: &str, update: impl FnOnce(&mut Listed) -> bool) {
        let edit = |r: &mut Record| update(&mut r.listed).then(|| r.listed.to_field());
        self.change(id, edit, "told");
    }

    /// Apply `edit` to the record of `id` held here and write `field` beside the request, with
    /// the value `edit` returns (`None`: nothing changed, nothing written).
    fn change(
        self: &Arc<Self>,
        id: &str,
        edit: impl FnOnce(&mut Record) -> Option<String>,
        field: &'static str,
    ) {
        let value = {
            let mut held = locked(&self.held);
            let Some(entry) = held.get_mut(id) else {
                return;
            };
            entry.last_used = Instant::now();
            let Some(value) = edit(&mut entry.record) else {
                return;
            };
            value
        };
        let this = Arc::clone(self);
        let id = id.to_string();
        tokio::spawn(async move {
            let key = this.key(&id);
            let ttl = this.ttl_secs();
            let mut connection = this.store.connection();
            let written = this
                .store
                .round_trip("writing a session's change", async {
                    redis::pipe()
                        .atomic()
                        .hset(&key, field, &value)
                        .ignore()
                        .expire(&key, ttl)
                        .ignore()
                        .query_async::<()>(&mut connection)
                        .await
                })
                .await;
            if written.is_err()
                && let Some(entry) = locked(&this.held).get_mut(id.as_str())
            {
                entry.dirty = true;
            }
        });
    }

    /// Session `id` is no longer held here (closed here, or this replica stops): forgotten,
    /// and left in the store for another replica to adopt.
    pub(crate) fn forget(&self, id: &str) {
        locked(&self.held).remove(id);
        locked(&self.fresh).remove(id);
        locked(&self.adopted).remove(id);
    }

    /// Write `record` whole under `id`, to expire in `left`.
    async fn write_whole(
        &self,
        id: &str,
        record: &Record,
        left: Duration,
    ) -> Result<(), StoreError> {
        let key = self.key(id);
        let ttl = ttl_of(left);
        let mut fields = vec![
            ("client", record.client.clone()),
            ("init", record.init.clone()),
        ];
        if let Some(level) = record.level {
            fields.push(("level", level_name(level)));
        }
        if !record.subscriptions.is_empty() {
            fields.push((
                "subs",
                serde_json::to_string(&record.subscriptions).unwrap_or_default(),
            ));
        }
        if !record.listed.is_empty() {
            fields.push(("told", record.listed.to_field()));
        }
        let mut connection = self.store.connection();
        self.store
            .round_trip("writing a session", async {
                redis::pipe()
                    .atomic()
                    .del(&key)
                    .ignore()
                    .hset_multiple(&key, &fields)
                    .ignore()
                    .expire(&key, ttl)
                    .ignore()
                    .query_async::<()>(&mut connection)
                    .await
            })
            .await
    }

    /// rmcp's view of these sessions, for `StreamableHttpServerConfig::session_store`.
    pub(crate) fn for_rmcp(self: &Arc<Self>) -> Arc<dyn SessionStore> {
        Arc::new(ForRmcp(Arc::clone(self)))
    }

    /// rmcp restores `id`: what the adoption check read (else a read now); the session is held
    /// here from now on, its level and subscriptions kept for the end of its handshake.
    async fn load(&self, id: &str) -> Result<Option<SessionState>, StoreError> {
        let stashed = locked(&self.fetched).remove(id);
        let record = match stashed {
            Some(record) => record,
            None => self.fetch(id).await?,
        };
        let Some(record) = record else {
            return Ok(None);
        };
        let params: InitializeRequestParams = match serde_json::from_str(&record.init) {
            Ok(params) => params,
            Err(e) => {
                let error = StoreError::Unreadable {
                    key: self.key(id),
                    reason: format!("its `init` is not initialize parameters: {e}"),
                };
                self.store.failed(&error);
                return Ok(None);
            }
        };
        locked(&self.adopted).insert(
            id.to_string(),
            Adopted {
                level: record.level,
                subscriptions: record.subscriptions.clone(),
                listed: record.listed.clone(),
            },
        );
        locked(&self.held).insert(
            Arc::from(id),
            Held {
                record,
                dirty: false,
                last_used: Instant::now(),
            },
        );
        Ok(Some(SessionState::new(params)))
    }

    /// rmcp opened `id` with `state`: kept until [`opened`](Self::opened) writes it (no round
    /// trip here: the client is not known yet).
    fn store_fresh(&self, id: &str, state: &SessionState) -> Result<(), StoreError> {
        let init = serde_json::to_string(&state.initialize_params).map_err(|e| {
            StoreError::Unreadable {
                key: self.key(id),
                reason: format!("its initialize parameters cannot be written: {e}"),
            }
        })?;
        locked(&self.fresh).insert(id.to_string(), init);
        Ok(())
    }

    /// The client ended `id` (`DELETE`), or it was closed to make room for another (see
    /// `http::sessions`): gone from the store too.
    pub(crate) async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.forget(id);
        let key = self.key(id);
        let mut connection = self.store.connection();
        self.store
            .round_trip("deleting an ended session", async {
                redis::cmd("DEL")
                    .arg(&key)
                    .query_async::<()>(&mut connection)
                    .await
            })
            .await
    }
}

/// A TTL in whole seconds, at least 1 (rounded up).
fn ttl_of(left: Duration) -> i64 {
    let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    i64::try_from(secs.max(1)).unwrap_or(i64::MAX)
}

/// A stored hash as a [`Record`].
fn parse(mut fields: HashMap<String, String>) -> Result<Record, String> {
    let client = fields.remove("client").ok_or("it has no `client`")?;
    let init = fields.remove("init").ok_or("it has no `init`")?;
    let level = match fields.remove("level") {
        None => None,
        Some(level) => Some(
            serde_json::from_value(serde_json::Value::String(level.clone()))
                .map_err(|_| format!("its `level` `{level}` is not a log level"))?,
        ),
    };
    let subscriptions = match fields.remove("subs") {
        None => BTreeSet::new(),
        Some(subs) => serde_json::from_str(&subs)
            .map_err(|e| format!("its `subs` is not a list of URIs: {e}"))?,
    };
    // Written by a release that kept no lists: taken as never listed.
    let listed = Listed::from_field(fields.remove("told").as_deref());
    Ok(Record {
        client,
        init,
        level,
        subscriptions,
        listed,
    })
}

/// rmcp's [`SessionStore`] over [`StoredSessions`].
struct ForRmcp(Arc<StoredSessions>);

#[async_trait::async_trait]
impl SessionStore for ForRmcp {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        Ok(self.0.load(session_id).await?)
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        Ok(self.0.store_fresh(session_id, state)?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.0.delete(session_id).await?)
    }
}

#[path = "session_sweep.rs"]
mod sweep;

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
