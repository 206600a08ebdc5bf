//! [`PegBoard`]: the registry of tools and the router of calls.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, MutexGuard, PoisonError, Weak, atomic::Ordering},
    time::Duration,
};

use arc_swap::ArcSwap;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use tokio::sync::watch;

use crate::{
    BoxedService, CallOptions, NamingPolicy, PegBoardError, ServiceInfo, ServiceOptions, Tool,
    discovery::{self, DiscoveryLimits},
    refresh::RefreshReport,
    registry::{Entry, Origin, Registry},
    slot::ServiceSlot,
};

/// Default timeout of a tool call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Default timeout of listing a service's tools (all pages together).
pub const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_MAX_PAGES: usize = 1_000;
const DEFAULT_MAX_TOOLS: usize = 10_000;
/// The longest `shutdown` waits for one service to end.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(8);
/// A burst of `list_changed` notifications within this window costs one re-listing.
const REFRESH_DEBOUNCE: Duration = Duration::from_millis(50);

/// The tools of many MCP services on one board, each service under its namespace.
///
/// `PegBoard` is a handle: clones are cheap and all clones are the same board, so share it
/// between tasks as it is (or in an `Arc`, as you like). Reads (`get_tool`, `select_tools`,
/// `list_all_tools`, ...) take no lock: they load an immutable snapshot, so they never wait for
/// writers or for each other, and every read sees one consistent board. Writes (`add_service`,
/// `register_tool`, `unregister_*`) are serialised, build the next snapshot and swap it in: all of
/// a write lands, or none of it.
///
/// ```
/// # use std::sync::Arc;
/// use pegboard::{PegBoard, Tool};
///
/// let board = PegBoard::new();
/// assert_eq!(board.tool_count(), 0);
/// // A hand-registered tool needs a service to route to; see `add_service` for the usual way.
/// let schema = Arc::new(serde_json::Map::new());
/// let err = board.register_tool(Some("web"), Tool::new("search", "Search", schema), 0).unwrap_err();
/// assert!(matches!(err, pegboard::PegBoardError::UnknownService { index: 0 }));
/// ```
#[derive(Clone, Default)]
pub struct PegBoard {
    inner: Arc<Inner>,
}

struct Inner {
    state: ArcSwap<Registry>,
    /// Serialises writers; never held across an `.await`.
    write: Mutex<()>,
    changes: watch::Sender<u64>,
    naming: NamingPolicy,
    call_timeout: Option<Duration>,
    limits: DiscoveryLimits,
}

impl Default for Inner {
    fn default() -> Self {
        PegBoardBuilder::default().inner()
    }
}

/// Builds a [`PegBoard`] with other naming or timeouts than the defaults.
///
/// ```
/// use std::time::Duration;
/// use pegboard::{NamingPolicy, PegBoard};
///
/// let board = PegBoard::builder()
///     .naming(NamingPolicy::default().with_separator("__"))
///     .call_timeout(Duration::from_secs(20))
///     .discovery_timeout(Duration::from_secs(5))
///     .build();
/// assert_eq!(board.naming().separator(), "__");
/// ```
#[derive(Clone, Debug)]
pub struct PegBoardBuilder {
    naming: NamingPolicy,
    call_timeout: Option<Duration>,
    limits: DiscoveryLimits,
}

impl Default for PegBoardBuilder {
    fn default() -> Self {
        Self {
            naming: NamingPolicy::default(),
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            limits: DiscoveryLimits {
                timeout: Some(DEFAULT_DISCOVERY_TIMEOUT),
                max_pages: DEFAULT_MAX_PAGES,
                max_tools: DEFAULT_MAX_TOOLS,
            },
        }
    }
}

impl PegBoardBuilder {
    /// How namespaces and tool names are combined (default: [`NamingPolicy::default`]).
    #[must_use]
    pub fn naming(mut self, naming: NamingPolicy) -> Self {
        self.naming = naming;
        self
    }

    /// Default timeout of each call (default 60 s).
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// Let calls wait as long as the service takes.
    #[must_use]
    pub fn no_call_timeout(mut self) -> Self {
        self.call_timeout = None;
        self
    }

    /// Timeout for listing a service's tools, all pages together (default 30 s).
    #[must_use]
    pub fn discovery_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = Some(timeout);
        self
    }

    /// The most tools the board takes from one service (default 10,000) and the most pages it
    /// asks for (default 1,000).
    #[must_use]
    pub fn max_tools_per_service(mut self, max_tools: usize, max_pages: usize) -> Self {
        self.limits.max_tools = max_tools;
        self.limits.max_pages = max_pages.max(1);
        self
    }

    /// The board.
    pub fn build(self) -> PegBoard {
        PegBoard {
            inner: Arc::new(self.inner()),
        }
    }

    fn inner(self) -> Inner {
        Inner {
            state: ArcSwap::from_pointee(Registry::default()),
            write: Mutex::new(()),
            changes: watch::Sender::new(0),
            naming: self.naming,
            call_timeout: self.call_timeout,
            limits: self.limits,
        }
    }
}

/// Where a call goes: see [`PegBoard::route`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Route {
    /// The index of the service that answers the call.
    pub service: usize,
    /// The tool's name at that service.
    pub original: Arc<str>,
}

/// What [`PegBoard::add_service_with`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Added {
    /// The index the service is stored under (for `register_tool`, `remove_service`, ...).
    pub index: usize,
    /// How many of its tools were registered.
    pub tools: usize,
}

/// A tool and its board name, checked, not yet committed.
struct Pending {
    name: Arc<str>,
    entry: Entry,
}

impl PegBoard {
    /// An empty board with the default naming policy (`namespace-tool`, LLM-safe) and timeouts.
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// assert_eq!((board.tool_count(), board.service_count(), board.namespace_count()), (0, 0, 0));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder for a board with other naming or timeouts.
    pub fn builder() -> PegBoardBuilder {
        PegBoardBuilder::default()
    }

    /// An empty board with this naming policy.
    ///
    /// ```
    /// let board = pegboard::PegBoard::with_naming(pegboard::NamingPolicy::verbatim());
    /// assert!(!board.naming().is_llm_safe());
    /// ```
    pub fn with_naming(naming: NamingPolicy) -> Self {
        Self::builder().naming(naming).build()
    }

    /// The naming policy in force.
    pub fn naming(&self) -> &NamingPolicy {
        &self.inner.naming
    }

    fn snapshot(&self) -> arc_swap::Guard<Arc<Registry>> {
        self.inner.state.load()
    }

    fn lock_writes(&self) -> MutexGuard<'_, ()> {
        // The guarded data is `()`: a writer that panicked left no half-made state behind
        // (snapshots are swapped in whole), so a poisoned lock is safe to take.
        self.inner
            .write
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn commit(&self, next: Registry) {
        let generation = next.generation;
        self.inner.state.store(Arc::new(next));
        self.inner.changes.send_replace(generation);
    }

    /// Discover every tool of `service`, register them under `namespace`, and store the service.
    ///
    /// All pages of `tools/list` are followed. Each tool's name is prefixed with the namespace
    /// (`web` + `search` -> `web-search`; `None` or `""` keep names as they are). Either all of the
    /// service's tools are registered, or none: on any clash (with the board, or between two tools
    /// of the service) the error names the tool and the namespace that holds it, and the board is
    /// exactly as it was. Returns the number of tools registered.
    ///
    /// The service is stored at index [`service_count`](Self::service_count)` - 1` of the moment
    /// (indices never shift). On an error the service is dropped, which closes it.
    ///
    /// # Errors
    /// [`PegBoardError::DuplicateTool`], [`PegBoardError::InvalidNamespace`],
    /// [`PegBoardError::InvalidName`], [`PegBoardError::Discovery`], [`PegBoardError::Timeout`],
    /// [`PegBoardError::ServiceClosed`], [`PegBoardError::TooManyTools`].
    ///
    /// ```no_run
    /// # async fn demo(service: pegboard::BoxedService, other: pegboard::BoxedService) -> Result<(), pegboard::PegBoardError> {
    /// let board = pegboard::PegBoard::new();
    /// board.add_service(Some("web".to_string()), service).await?; // "search" is now "web-search"
    /// board.add_service(None, other).await?;                      // names kept as they are
    /// # Ok(()) }
    /// ```
    pub async fn add_service(
        &self,
        namespace: Option<String>,
        service: BoxedService,
    ) -> Result<usize, PegBoardError> {
        self.add_service_with(namespace, service, ServiceOptions::default())
            .await
            .map(|added| added.tools)
    }

    /// [`add_service`](Self::add_service) with a tool filter, a call timeout for this service, or
    /// a [`ToolListWatch`](crate::client::ToolListWatch) to follow its `tools/list_changed`.
    ///
    /// Returns where the service was stored and how many tools were registered.
    ///
    /// # Errors
    /// As [`add_service`](Self::add_service).
    pub async fn add_service_with(
        &self,
        namespace: Option<String>,
        service: BoxedService,
        mut options: ServiceOptions,
    ) -> Result<Added, PegBoardError> {
        let namespace: Option<Arc<str>> = self
            .inner
            .naming
            .namespace(namespace.as_deref())?
            .map(Arc::from);
        let peer = service.peer().clone();
        let tools =
            discovery::list_all_tools(&peer, namespace.as_deref(), self.inner.limits).await?;
        let pending = self.prepare(namespace.as_ref(), tools, &options)?;
        let count = pending.len();
        let watch = options.watch.take();

        let _writing = self.lock_writes();
        let current = self.snapshot();
        if let Some(clash) = pending.iter().find(|p| current.tools.contains_key(&p.name)) {
            return Err(PegBoardError::DuplicateTool {
                name: clash.name.to_string(),
                namespace: current.owner_of(&clash.name).flatten(),
            });
        }
        let mut next = Registry::clone(&current);
        let index = next.services.len();
        let slot = Arc::new(ServiceSlot::new(namespace.clone(), service, options));
        next.services.push(Some(Arc::clone(&slot)));
        for Pending { name, mut entry } in pending {
            entry.service = index;
            next.tools.insert(name, entry);
        }
        next.reindex();
        self.commit(next);
        if let Some(watch) = watch {
            let task = tokio::spawn(follow_changes(Arc::downgrade(&self.inner), index, watch));
            *slot.watcher.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(task.abort_handle());
        }
        tracing::debug!(
            namespace = namespace.as_deref().unwrap_or(""),
            index,
            count,
            "service added"
        );
        Ok(Added {
            index,
            tools: count,
        })
    }

    /// Name, filter and check a service's tools against each other (not yet against the board).
    fn prepare(
        &self,
        namespace: Option<&Arc<str>>,
        tools: Vec<rmcp::model::Tool>,
        options: &ServiceOptions,
    ) -> Result<Vec<Pending>, PegBoardError> {
        let mut pending: Vec<Pending> = Vec::with_capacity(tools.len());
        let mut names: HashSet<Arc<str>> = HashSet::with_capacity(tools.len());
        for tool in tools {
            if !options.admits(&tool.name) {
                continue;
            }
            let p = self.pending(namespace, Tool::from(tool), Origin::Discovered)?;
            if !names.insert(Arc::clone(&p.name)) {
                return Err(PegBoardError::DuplicateTool {
                    name: p.name.to_string(),
                    namespace: namespace.map(|ns| ns.to_string()),
                });
            }
            pending.push(p);
        }
        Ok(pending)
    }

    fn pending(
        &self,
        namespace: Option<&Arc<str>>,
        tool: Tool,
        origin: Origin,
    ) -> Result<Pending, PegBoardError> {
        let original: Arc<str> = Arc::clone(tool.name_arc());
        let name: Arc<str> = self
            .inner
            .naming
            .full_name(namespace.map(AsRef::as_ref), &original)?
            .into();
        Ok(Pending {
            entry: Entry {
                tool: tool.renamed(Arc::clone(&name)),
                service: usize::MAX,
                original,
                namespace: namespace.cloned(),
                origin,
            },
            name,
        })
    }

    /// Register one tool by hand under `namespace`, routed to the service at `service_idx`.
    ///
    /// The tool's name is prefixed as in [`add_service`](Self::add_service); calls to it go to the
    /// service under the tool's own (unprefixed) name.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`] if no service is stored at `service_idx`,
    /// [`PegBoardError::DuplicateTool`] if the name is taken, and the naming errors.
    ///
    /// ```no_run
    /// # async fn demo(service: pegboard::BoxedService) -> Result<(), pegboard::PegBoardError> {
    /// # use std::sync::Arc;
    /// let board = pegboard::PegBoard::new();
    /// board.add_service(Some("web".into()), service).await?;     // stored at index 0
    /// let alias = pegboard::Tool::new("lookup", "Same as search", Arc::new(Default::default()));
    /// board.register_tool(Some("alias"), alias, 0)?;              // "alias-lookup" -> service 0, tool "lookup"
    /// # Ok(()) }
    /// ```
    pub fn register_tool(
        &self,
        namespace: Option<&str>,
        tool: Tool,
        service_idx: usize,
    ) -> Result<(), PegBoardError> {
        let namespace: Option<Arc<str>> = self.inner.naming.namespace(namespace)?.map(Arc::from);
        let mut pending = self.pending(namespace.as_ref(), tool, Origin::Manual)?;
        let _writing = self.lock_writes();
        let current = self.snapshot();
        if current.service(service_idx).is_none() {
            return Err(PegBoardError::UnknownService { index: service_idx });
        }
        if let Some(owner) = current.owner_of(&pending.name) {
            return Err(PegBoardError::DuplicateTool {
                name: pending.name.to_string(),
                namespace: owner,
            });
        }
        let mut next = Registry::clone(&current);
        pending.entry.service = service_idx;
        next.tools.insert(pending.name, pending.entry);
        next.reindex();
        self.commit(next);
        Ok(())
    }

    /// The tool the LLM knows by `tool_name`.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().get_tool("web-search").is_none());
    /// ```
    pub fn get_tool(&self, tool_name: &str) -> Option<Tool> {
        self.snapshot().tools.get(tool_name).map(|e| e.tool.clone())
    }

    /// The tools named, in the order asked, or `None` if any one is missing.
    ///
    /// All are looked up on one snapshot, so the answer is never a mix of two boards.
    ///
    /// ```
    /// let board = pegboard::PegBoard::new();
    /// assert_eq!(board.select_tools(&[]), Some(vec![]));
    /// assert_eq!(board.select_tools(&["web-search"]), None);
    /// ```
    pub fn select_tools(&self, tool_names: &[&str]) -> Option<Vec<Tool>> {
        let registry = self.snapshot();
        tool_names
            .iter()
            .map(|name| registry.tools.get(*name).map(|e| e.tool.clone()))
            .collect()
    }

    /// Where a call to `tool_name` goes: the service index and the tool's original name.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().get_tool_route("web-search"), None);
    /// ```
    pub fn get_tool_route(&self, tool_name: &str) -> Option<(usize, String)> {
        self.snapshot()
            .tools
            .get(tool_name)
            .map(|e| (e.service, String::from(&*e.original)))
    }

    /// [`get_tool_route`](Self::get_tool_route) without allocating: the original name is shared.
    ///
    /// For hot paths that route many calls (a gateway, an agent loop), this avoids the `String`
    /// that the seed signature of `get_tool_route` has to allocate on every lookup.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().route("web-search").is_none());
    /// ```
    pub fn route(&self, tool_name: &str) -> Option<Route> {
        self.snapshot().tools.get(tool_name).map(|e| Route {
            service: e.service,
            original: Arc::clone(&e.original),
        })
    }

    /// The namespace that owns `tool_name`, if the tool is on the board and has one.
    pub fn namespace_of(&self, tool_name: &str) -> Option<String> {
        self.snapshot().owner_of(tool_name).flatten()
    }

    /// The board names of the tools in `namespace`, in registration order (empty if unknown).
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().list_tools_in_namespace("web").is_empty());
    /// ```
    pub fn list_tools_in_namespace(&self, namespace: &str) -> Vec<String> {
        self.snapshot()
            .namespaces
            .get(namespace)
            .map(|names| names.iter().map(|n| String::from(&**n)).collect())
            .unwrap_or_default()
    }

    /// The tools in `namespace`, in registration order (empty if unknown).
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().get_tools_in_namespace("web").is_empty());
    /// ```
    pub fn get_tools_in_namespace(&self, namespace: &str) -> Vec<Tool> {
        let registry = self.snapshot();
        registry
            .namespaces
            .get(namespace)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|n| registry.tools.get(n).map(|e| e.tool.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every board name, in registration order: what to send to the LLM.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().list_all_tools().is_empty());
    /// ```
    pub fn list_all_tools(&self) -> Vec<String> {
        self.snapshot()
            .tools
            .keys()
            .map(|n| String::from(&**n))
            .collect()
    }

    /// Every tool, in registration order: what to send to the LLM.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().get_all_tools().is_empty());
    /// ```
    pub fn get_all_tools(&self) -> Vec<Tool> {
        self.snapshot()
            .tools
            .values()
            .map(|e| e.tool.clone())
            .collect()
    }

    /// Every tool as an MCP tool object, as the gateway's `tools/list` sends them: board names,
    /// and the owning namespace in `_meta` under [`NAMESPACE_META_KEY`](crate::export::NAMESPACE_META_KEY).
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().mcp_tools().is_empty());
    /// ```
    pub fn mcp_tools(&self) -> Vec<rmcp::model::Tool> {
        self.snapshot()
            .tools
            .values()
            .map(|entry| {
                let mut tool = entry.tool.to_rmcp();
                if let Some(ns) = &entry.namespace {
                    let meta = tool.meta.get_or_insert_with(Default::default);
                    meta.0.insert(
                        crate::export::NAMESPACE_META_KEY.to_string(),
                        serde_json::Value::String(String::from(&**ns)),
                    );
                }
                tool
            })
            .collect()
    }

    /// Every namespace on the board, in order of registration.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().list_namespaces().is_empty());
    /// ```
    pub fn list_namespaces(&self) -> Vec<String> {
        self.snapshot()
            .namespaces
            .keys()
            .map(|n| String::from(&**n))
            .collect()
    }

    /// Remove one tool by its board name. The service stays (other tools may route to it).
    ///
    /// # Errors
    /// [`PegBoardError::ToolNotFound`], with close matches.
    ///
    /// ```
    /// let err = pegboard::PegBoard::new().unregister_tool("web-search").unwrap_err();
    /// assert!(matches!(err, pegboard::PegBoardError::ToolNotFound { .. }));
    /// ```
    pub fn unregister_tool(&self, prefixed_name: &str) -> Result<(), PegBoardError> {
        let _writing = self.lock_writes();
        let current = self.snapshot();
        if !current.tools.contains_key(prefixed_name) {
            return Err(not_found(&current, prefixed_name));
        }
        let mut next = Registry::clone(&current);
        next.tools.shift_remove(prefixed_name);
        next.reindex();
        self.commit(next);
        Ok(())
    }

    /// Remove a namespace: its tools, and the services added under it (which shut down once no
    /// call is in flight on them). Tools of other namespaces that route to those services go too.
    /// Returns the number of tools removed.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownNamespace`], listing the namespaces there are.
    ///
    /// ```
    /// let err = pegboard::PegBoard::new().unregister_namespace("web").unwrap_err();
    /// assert!(matches!(err, pegboard::PegBoardError::UnknownNamespace { .. }));
    /// ```
    pub fn unregister_namespace(&self, namespace: &str) -> Result<usize, PegBoardError> {
        let _writing = self.lock_writes();
        let current = self.snapshot();
        if !current.namespaces.contains_key(namespace) {
            return Err(PegBoardError::UnknownNamespace {
                namespace: namespace.to_string(),
                known: current.known_namespaces(),
            });
        }
        let mut next = Registry::clone(&current);
        let removed_services =
            next.take_services(|_, slot| slot.namespace.as_deref() == Some(namespace));
        let before = next.tools.len();
        next.tools.retain(|_, e| {
            e.namespace.as_deref() != Some(namespace) && !removed_services.contains(&e.service)
        });
        let removed = before - next.tools.len();
        next.reindex();
        self.commit(next);
        Ok(removed)
    }

    /// Remove the service at `index` and every tool routed to it; returns the number of tools
    /// removed. The service shuts down once no call is in flight on it.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`].
    pub fn remove_service(&self, index: usize) -> Result<usize, PegBoardError> {
        let _writing = self.lock_writes();
        if self.snapshot().service(index).is_none() {
            return Err(PegBoardError::UnknownService { index });
        }
        Ok(self.remove_services_where(|i, _| i == index).1)
    }

    /// Remove every service whose transport has closed, with its tools, in one step; returns
    /// their indices.
    pub fn remove_closed_services(&self) -> Vec<usize> {
        let _writing = self.lock_writes();
        self.remove_services_where(|_, slot| slot.state() == crate::ServiceState::Closed)
            .0
    }

    /// Remove the services `remove` picks and every tool routed to them, in one snapshot; returns
    /// their indices and the number of tools removed. The caller holds the write lock.
    fn remove_services_where(
        &self,
        remove: impl Fn(usize, &ServiceSlot) -> bool,
    ) -> (Vec<usize>, usize) {
        let mut next = Registry::clone(&self.snapshot());
        let taken = next.take_services(remove);
        if taken.is_empty() {
            return (taken, 0);
        }
        let before = next.tools.len();
        next.tools.retain(|_, e| !taken.contains(&e.service));
        let removed = before - next.tools.len();
        next.reindex();
        self.commit(next);
        (taken, removed)
    }

    /// Number of tools on the board.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().tool_count(), 0);
    /// ```
    pub fn tool_count(&self) -> usize {
        self.snapshot().tools.len()
    }

    /// Number of services stored (removed ones not counted).
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().service_count(), 0);
    /// ```
    pub fn service_count(&self) -> usize {
        self.snapshot().services.iter().flatten().count()
    }

    /// Number of namespaces.
    ///
    /// ```
    /// assert_eq!(pegboard::PegBoard::new().namespace_count(), 0);
    /// ```
    pub fn namespace_count(&self) -> usize {
        self.snapshot().namespaces.len()
    }

    /// Every stored service: index, namespace, state (running or closed), number of tools.
    pub fn services(&self) -> Vec<ServiceInfo> {
        let registry = self.snapshot();
        let mut tools_per_service: HashMap<usize, usize> = HashMap::new();
        for entry in registry.tools.values() {
            *tools_per_service.entry(entry.service).or_default() += 1;
        }
        registry
            .services
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| {
                slot.as_ref().map(|slot| ServiceInfo {
                    index,
                    namespace: slot.namespace.as_deref().map(str::to_string),
                    state: slot.state(),
                    tools: tools_per_service.get(&index).copied().unwrap_or(0),
                })
            })
            .collect()
    }

    /// Resolves when the connection of the service at `index` ends (its process exited, its
    /// connection dropped, or it was shut down): what a supervisor awaits to restart it.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`] if no service is stored at `index`.
    pub async fn wait_closed(&self, index: usize) -> Result<(), PegBoardError> {
        let slot = self
            .snapshot()
            .service(index)
            .cloned()
            .ok_or(PegBoardError::UnknownService { index })?;
        // Hold only the closed signal, not the slot: waiting must not keep the service alive.
        let closed = slot.closed();
        drop(slot);
        closed.await;
        Ok(())
    }

    /// A receiver that changes whenever the set of tools on the board changes (its value is the
    /// board's generation). The gateway uses it to send `tools/list_changed` downstream.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Call the tool the LLM knows as `tool_name` with these arguments.
    ///
    /// The call goes to the tool's service under the tool's original name. `arguments` must be a
    /// JSON object, or `null` for none. A tool that runs but reports failure is an `Ok` result
    /// with `is_error: Some(true)`, as MCP has it; an `Err` means the call did not get through.
    ///
    /// # Errors
    /// [`PegBoardError::ToolNotFound`] (with close matches), [`PegBoardError::InvalidArguments`],
    /// [`PegBoardError::ServiceError`], [`PegBoardError::ServiceClosed`],
    /// [`PegBoardError::Timeout`] (the request is cancelled towards the server).
    ///
    /// ```no_run
    /// # async fn demo(board: pegboard::PegBoard) -> Result<(), pegboard::PegBoardError> {
    /// let result = board.call_tool("web-search", serde_json::json!({"query": "rust programming"})).await?;
    /// # Ok(()) }
    /// ```
    pub async fn call_tool(
        &self,
        tool_name: &str,
        arguments: serde_json::Value,
    ) -> Result<CallToolResult, PegBoardError> {
        self.call_tool_with(tool_name, arguments, CallOptions::default())
            .await
    }

    /// [`call_tool`](Self::call_tool) with options, such as a timeout for this call.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    ///
    /// ```no_run
    /// # async fn demo(board: pegboard::PegBoard) -> Result<(), pegboard::PegBoardError> {
    /// use std::time::Duration;
    /// let options = pegboard::CallOptions::new().timeout(Duration::from_secs(5));
    /// let result = board.call_tool_with("web-search", serde_json::json!({"query": "rust"}), options).await?;
    /// # Ok(()) }
    /// ```
    pub async fn call_tool_with(
        &self,
        tool_name: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult, PegBoardError> {
        let arguments = match arguments {
            serde_json::Value::Null => None,
            serde_json::Value::Object(map) => Some(map),
            other => {
                return Err(PegBoardError::InvalidArguments {
                    tool: tool_name.to_string(),
                    reason: format!(
                        "arguments must be a JSON object (or null), not {}",
                        json_kind(&other)
                    ),
                });
            }
        };
        // Route on the snapshot, keep the service alive with its Arc, and let go of the
        // snapshot before awaiting: no lock or guard is held across the call.
        let (slot, original) =
            {
                let registry = self.snapshot();
                let entry = registry
                    .tools
                    .get(tool_name)
                    .ok_or_else(|| not_found(&registry, tool_name))?;
                let slot = registry.service(entry.service).cloned().ok_or(
                    PegBoardError::UnknownService {
                        index: entry.service,
                    },
                )?;
                (slot, Arc::clone(&entry.original))
            };
        let namespace = || slot.namespace.as_deref().map(str::to_string);
        if slot.peer.is_transport_closed() {
            return Err(PegBoardError::ServiceClosed {
                namespace: namespace(),
            });
        }
        let mut params = CallToolRequestParams::new(String::from(&*original));
        params.arguments = arguments;
        let call = slot.peer.call_tool(params);
        let timeout = options
            .timeout
            .or(slot.call_timeout())
            .or(self.inner.call_timeout);
        let outcome = match timeout {
            None => call.await,
            // Dropping rmcp's call future on timeout sends `notifications/cancelled` to the server.
            Some(after) => {
                tokio::time::timeout(after, call)
                    .await
                    .map_err(|_| PegBoardError::Timeout {
                        operation: tool_name.to_string(),
                        namespace: namespace(),
                        after,
                    })?
            }
        };
        outcome.map_err(|source| match source {
            rmcp::ServiceError::TransportClosed => PegBoardError::ServiceClosed {
                namespace: namespace(),
            },
            source => PegBoardError::ServiceError {
                tool: tool_name.to_string(),
                namespace: namespace(),
                source,
            },
        })
    }

    /// Re-list the tools of every service added under `namespace` and swap them in atomically.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownNamespace`], or the first service's listing error.
    pub async fn refresh_namespace(&self, namespace: &str) -> Result<RefreshReport, PegBoardError> {
        let indices: Vec<usize> = {
            let registry = self.snapshot();
            registry
                .services
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    s.as_ref()
                        .is_some_and(|s| s.namespace.as_deref() == Some(namespace))
                })
                .map(|(i, _)| i)
                .collect()
        };
        if indices.is_empty() {
            return Err(PegBoardError::UnknownNamespace {
                namespace: namespace.to_string(),
                known: self.snapshot().known_namespaces(),
            });
        }
        let mut report = RefreshReport::default();
        for index in indices {
            report.merge(self.refresh_service(index).await?);
        }
        Ok(report)
    }

    /// Re-list the tools of the service at `index` and swap them in atomically: new tools are
    /// appended, gone ones removed, changed ones replaced in place; unchanged tools keep their
    /// names and their order. A new tool whose name clashes with another service's is skipped
    /// (and reported). A refresh overtaken by a newer one for the same service drops its result.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`], or the listing's error (the board is then unchanged).
    pub async fn refresh_service(&self, index: usize) -> Result<RefreshReport, PegBoardError> {
        let slot = self
            .snapshot()
            .service(index)
            .cloned()
            .ok_or(PegBoardError::UnknownService { index })?;
        let generation = slot.refresh_generation.fetch_add(1, Ordering::SeqCst) + 1;
        let tools =
            discovery::list_all_tools(&slot.peer, slot.namespace.as_deref(), self.inner.limits)
                .await?;
        let mut fresh: indexmap::IndexMap<Arc<str>, Pending> = indexmap::IndexMap::new();
        let mut report = RefreshReport::default();
        for tool in tools {
            if !slot.options.admits(&tool.name) {
                continue;
            }
            match self.pending(
                slot.namespace.as_ref(),
                Tool::from(tool),
                Origin::Discovered,
            ) {
                Ok(p) if !fresh.contains_key(&p.name) => {
                    fresh.insert(Arc::clone(&p.name), p);
                }
                Ok(p) => report.skipped.push(p.name.to_string()),
                Err(e) => {
                    tracing::warn!(index, error = %e, "refresh: skipping a tool");
                }
            }
        }

        let _writing = self.lock_writes();
        let current = self.snapshot();
        let still_there = current
            .service(index)
            .is_some_and(|s| Arc::ptr_eq(s, &slot));
        if !still_there || slot.refresh_generation.load(Ordering::SeqCst) != generation {
            report.superseded = true;
            return Ok(report);
        }
        let mut next = Registry::clone(&current);
        next.tools.retain(|name, entry| {
            if entry.service != index || entry.origin != Origin::Discovered {
                return true;
            }
            match fresh.shift_remove(name) {
                Some(p) => {
                    if p.entry.tool != entry.tool {
                        report.changed.push(name.to_string());
                        *entry = p.entry;
                    }
                    true
                }
                None => {
                    report.removed.push(name.to_string());
                    false
                }
            }
        });
        for (name, mut p) in fresh {
            if let Some(owner) = next.owner_of(&name) {
                tracing::warn!(tool = %name, owner = owner.as_deref().unwrap_or(""), "refresh: name already taken; tool skipped");
                report.skipped.push(name.to_string());
                continue;
            }
            p.entry.service = index;
            report.added.push(name.to_string());
            next.tools.insert(name, p.entry);
        }
        if report.is_unchanged() {
            return Ok(report);
        }
        next.reindex();
        self.commit(next);
        Ok(report)
    }

    /// Close every service (child processes are stopped and reaped) and empty the board.
    ///
    /// Calls in flight end with an error. Waits at most a few seconds per service, all services
    /// in parallel.
    pub async fn shutdown(&self) {
        let slots: Vec<Arc<ServiceSlot>> = {
            let _writing = self.lock_writes();
            let current = self.snapshot();
            let slots = current.services.iter().flatten().cloned().collect();
            let mut next = Registry {
                generation: current.generation,
                ..Registry::default()
            };
            next.reindex();
            self.commit(next);
            slots
        };
        let mut closing = tokio::task::JoinSet::new();
        for slot in slots {
            slot.stop();
            closing.spawn(async move {
                // rmcp gives a child process 3 s to exit on EOF, then signals it: 8 s covers that.
                let _ = tokio::time::timeout(SHUTDOWN_WAIT, slot.closed()).await;
            });
        }
        while closing.join_next().await.is_some() {}
    }
}

/// Follow one service's `tools/list_changed` until the service or the board goes away.
async fn follow_changes(board: Weak<Inner>, index: usize, mut watch: crate::client::ToolListWatch) {
    while watch.changes.changed().await.is_ok() {
        // Coalesce a burst into one re-listing.
        tokio::time::sleep(REFRESH_DEBOUNCE).await;
        watch.changes.borrow_and_update();
        let Some(inner) = board.upgrade() else { return };
        let board = PegBoard { inner };
        match board.refresh_service(index).await {
            Ok(report) => tracing::info!(
                index,
                added = report.added.len(),
                removed = report.removed.len(),
                changed = report.changed.len(),
                "tools changed on the server; board refreshed"
            ),
            Err(PegBoardError::UnknownService { .. }) => return,
            Err(e) => {
                tracing::warn!(index, error = %e, "could not refresh tools after list_changed")
            }
        }
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// A `ToolNotFound` with the closest names on the board.
fn not_found(registry: &Registry, name: &str) -> PegBoardError {
    PegBoardError::ToolNotFound {
        name: name.to_string(),
        suggestions: crate::suggest::close_matches(name, registry.tools.keys().map(AsRef::as_ref)),
    }
}
