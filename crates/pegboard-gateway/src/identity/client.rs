//! A client as requests see it: its name, what it may see, its limits and their counters.
//! One `Arc<Client>` per configured client, shared by all its sessions and calls.

use std::fmt;
use std::sync::Arc;

use pegboard::{PegBoard, ToolMatch, search::MAX_LIMIT};

use crate::limits::{
    CallLimits, CallPermit, CallRate, Concurrency, LimitError, LimitSettings, SharedLimits,
    SharedPermit,
};
use crate::policy::{ClientView, ToolPatterns, ViewCache};

/// The name of the client of `--token`, of a gateway without clients, and of the stdio
/// front's default view: everything is visible to it.
pub const DEFAULT_CLIENT: &str = "default";

/// Who is calling: one configured client (or [`DEFAULT_CLIENT`]).
pub struct Client {
    name: Arc<str>,
    tools: ToolPatterns,
    resources: bool,
    max_sessions: usize,
    concurrency: Option<Arc<Concurrency>>,
    rate: Option<CallRate>,
    view: ViewCache,
    /// Its limits as configured (for counting them in the store).
    limits: LimitSettings,
    /// Where its limits are counted for the whole fleet (`--store`), when it has any: then
    /// `concurrency` and `rate` are not used.
    shared: Option<Arc<dyn SharedLimits>>,
}

/// What a call holds while it runs: its place among the client's `maxConcurrent` (freed when
/// dropped). Free when the client has no such limit.
#[derive(Debug)]
#[must_use = "the call's place is freed when this is dropped: hold it until the call ends"]
pub struct CallAdmission {
    _permit: Option<CallPermit>,
    /// Its place among a fleet-wide `maxConcurrent` (given back when dropped).
    _shared: Option<SharedPermit>,
}

impl CallAdmission {
    /// Whether the call holds a place counted in the store (a fleet-wide `maxConcurrent`),
    /// which [`CallAdmission::release`] gives back before the answer goes out.
    pub(crate) fn holds_shared_place(&self) -> bool {
        self._shared.as_ref().is_some_and(SharedPermit::holds)
    }

    /// The call has ended: give its places back, and wait until the store has its own, so that
    /// the client's next call (on any replica) finds it free, as on one replica.
    pub(crate) async fn release(self) {
        if let Some(shared) = self._shared {
            shared.release().await;
        }
    }
}

impl Client {
    /// A client with `tools` patterns, `resources` flag and `limits`; `max_sessions` is its
    /// session limit (its own `maxSessions`, else its fair share of `--max-sessions`).
    pub fn new(
        name: Arc<str>,
        tools: ToolPatterns,
        resources: bool,
        limits: &LimitSettings,
        max_sessions: usize,
    ) -> Self {
        Self {
            name,
            tools,
            resources,
            max_sessions: limits.max_sessions.unwrap_or(max_sessions),
            concurrency: limits.max_concurrent.map(Concurrency::new),
            rate: limits.calls_per_minute.map(CallRate::new),
            view: ViewCache::new(),
            limits: *limits,
            shared: None,
        }
    }

    /// The same client with its limits counted in `shared` (the store) for the whole fleet
    /// instead of here; a client without limits is left as it is (it costs the store nothing).
    pub(crate) fn counted_in(mut self, shared: &Arc<dyn SharedLimits>) -> Self {
        if self.call_limits().any() || self.limits.max_sessions.is_some() {
            self.shared = Some(Arc::clone(shared));
            self.concurrency = None;
            self.rate = None;
        }
        self
    }

    fn call_limits(&self) -> CallLimits {
        CallLimits {
            per_minute: self.limits.calls_per_minute,
            concurrent: self.limits.max_concurrent,
        }
    }

    /// Whether its calls are counted in the store: [`Client::admit_shared`] then admits them
    /// (one round trip), not [`Client::begin_call`].
    pub(crate) fn counts_calls_in_store(&self) -> bool {
        self.shared.is_some() && self.call_limits().any()
    }

    /// Where its `maxSessions` is counted for the whole fleet, with the limit: only a limit its
    /// entry sets (the fair share of `--max-sessions` is this replica's, as that cap is).
    pub(crate) fn shared_sessions(&self) -> Option<(&Arc<dyn SharedLimits>, usize)> {
        Some((self.shared.as_ref()?, self.limits.max_sessions?))
    }

    /// Admit one call in the store (see [`Client::counts_calls_in_store`]); for a client whose
    /// calls are not counted there, [`Client::begin_call`].
    ///
    /// # Errors
    /// As [`Client::begin_call`], and [`LimitError::Unavailable`] when the store cannot count
    /// the call.
    pub(crate) async fn admit_shared(&self) -> Result<CallAdmission, LimitError> {
        let limits = self.call_limits();
        match &self.shared {
            Some(shared) if limits.any() => {
                let permit = shared.admit_call(&self.name, limits).await?;
                Ok(CallAdmission {
                    _permit: None,
                    _shared: Some(permit),
                })
            }
            _ => self.begin_call(),
        }
    }

    /// A client that sees everything and has no limits but `max_sessions`: `--token`'s, the
    /// open gateway's, the stdio front's default.
    pub fn unrestricted(name: &str, max_sessions: usize) -> Self {
        Self::new(
            Arc::from(name),
            ToolPatterns::all(),
            true,
            &LimitSettings::default(),
            max_sessions,
        )
    }

    /// Its name (in errors, logs and the audit log).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its name, shared (for the audit log and the session book).
    pub fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    /// Whether it sees every tool, prompt and resource: the front may skip filtering and serve
    /// the board's own lists, as without clients.
    pub fn sees_everything(&self) -> bool {
        self.tools.sees_everything() && self.resources
    }

    /// Its `tools` patterns.
    pub fn patterns(&self) -> &ToolPatterns {
        &self.tools
    }

    /// Whether it may see (and call) the tool the board lists as `name`. Matches the patterns
    /// (no board needed); [`Client::view`]'s lookup is cheaper per request.
    pub fn may_see_tool(&self, name: &str) -> bool {
        self.tools.is_visible(name)
    }

    /// Whether it may see (and get) the prompt the board lists as `name`: the same patterns.
    pub fn may_see_prompt(&self, name: &str) -> bool {
        self.tools.is_visible(name)
    }

    /// Whether it may see the resources of a server whose tools and prompts the board lists as
    /// `names`: when it may see at least one of them, and its `resources` is not `false`.
    pub fn may_see_resources_of<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> bool {
        self.resources
            && (self.tools.sees_everything() || names.into_iter().any(|n| self.tools.is_visible(n)))
    }

    /// Whether its `resources` is not `false`.
    pub fn resources_allowed(&self) -> bool {
        self.resources
    }

    /// Its view of `board`, cached until the board changes (one atomic load when unchanged).
    pub fn view(&self, board: &PegBoard) -> Arc<ClientView> {
        self.view.view(&self.tools, self.resources, board)
    }

    /// The board's best `limit` tools for `query` among those it may see (`search_tools` in
    /// search mode, `pegboard search --client`): searched as widely as a search goes, then the
    /// hidden ones left out, so a hidden tool never takes a visible one's place.
    pub fn search_tools(&self, board: &PegBoard, query: &str, limit: usize) -> Vec<ToolMatch> {
        if self.sees_everything() {
            return board.search_tools(query, limit);
        }
        let view = self.view(board);
        let mut found = board.search_tools(query, MAX_LIMIT);
        found.retain(|m| view.may_see_tool(&m.tool.name));
        found.truncate(limit.max(1));
        found
    }

    /// The sessions it may hold at once.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Admit one call under its `callsPerMinute` and `maxConcurrent`: hold the result until the
    /// call ends. Never waits.
    ///
    /// # Errors
    /// [`LimitError::Rate`] (with when to retry) or [`LimitError::Concurrency`].
    pub fn begin_call(&self) -> Result<CallAdmission, LimitError> {
        let permit = match &self.concurrency {
            Some(c) => Some(c.try_acquire().ok_or_else(|| LimitError::Concurrency {
                client: self.name.to_string(),
                limit: c.limit(),
            })?),
            None => None,
        };
        // After the concurrency check: a call refused for concurrency spends no rate.
        if let Some(rate) = &self.rate {
            rate.check().map_err(|retry_after| LimitError::Rate {
                client: self.name.to_string(),
                limit: rate.per_minute().get(),
                retry_after,
            })?;
        }
        Ok(CallAdmission {
            _permit: permit,
            _shared: None,
        })
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.name)
            .field("tools", &self.tools)
            .field("resources", &self.resources)
            .field("max_sessions", &self.max_sessions)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn unrestricted() {
        let c = crate::identity::Client::unrestricted("default", 1000);
        assert!(c.sees_everything() && c.may_see_tool("any-tool"));
    }

    #[test]
    fn search_tools() {
        use crate::identity::Client;
        let client = Client::unrestricted("default", 10);
        assert!(
            client
                .search_tools(&pegboard::PegBoard::new(), "convert", 5)
                .is_empty()
        );
    }
}
