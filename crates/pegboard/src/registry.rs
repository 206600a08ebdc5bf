//! The board's state: one immutable snapshot, replaced as a whole on every change.

use std::{
    collections::{HashMap, HashSet},
    fmt,
    sync::{Arc, OnceLock},
};

use arcstr::ArcStr;
use foldhash::fast::RandomState;
use indexmap::IndexMap;

use crate::{
    Tool,
    search::{SearchIndex, ToolDoc},
    slot::ServiceSlot,
};

/// Where a service is stored on the board. Indices are stable and never reused: a removed
/// service leaves a hole. Only the public edge speaks `usize`; inside the crate a tool's
/// position can never be passed where a service belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ServiceId(usize);

impl ServiceId {
    pub(crate) const fn new(index: usize) -> Self {
        Self(index)
    }

    pub(crate) const fn index(self) -> usize {
        self.0
    }
}

impl fmt::Display for ServiceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// How a tool came onto the board: a refresh re-lists only what discovery put there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Discovered,
    Manual,
}

/// One tool on the board and where its calls go.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) tool: Tool,
    pub(crate) service: ServiceId,
    pub(crate) original: ArcStr,
    pub(crate) namespace: Option<Arc<str>>,
    pub(crate) origin: Origin,
}

/// A snapshot. Readers hold it without a lock; writers clone it, change the clone and swap it in.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    /// Board name -> entry, in registration order (the order sent to the LLM, stable for prompt caching).
    pub(crate) tools: IndexMap<ArcStr, Entry, RandomState>,
    /// Namespace -> board names, derived from `tools` and `services` by [`Registry::reindex`].
    pub(crate) namespaces: IndexMap<Arc<str>, Vec<ArcStr>, RandomState>,
    /// Indexed by [`ServiceId`]: a removed service leaves `None`, never shifting the others.
    pub(crate) services: Vec<Option<Arc<ServiceSlot>>>,
    /// Bumped on every change of the tool set.
    pub(crate) generation: u64,
    /// Set by `shutdown`: the board takes no new services.
    pub(crate) shut_down: bool,
    /// The tool-search index of this snapshot, built on its first search (see [`SearchCell`]).
    pub(crate) search: Arc<SearchCell>,
}

/// The search index of one snapshot, built lazily from the previous one.
///
/// Writes stay as cheap as before: a write only carries the last built index forward as the
/// `base`. The first search on a snapshot builds its index from that base, analysing only the
/// services whose tools changed (a segment is reused when every tool in it is the same shared
/// `Tool`, one pointer compare each); later searches on the snapshot reuse it.
#[derive(Default)]
pub(crate) struct SearchCell {
    built: OnceLock<SearchIndex>,
    base: Option<SearchIndex>,
}

impl SearchCell {
    /// The cell of the snapshot after `previous`: its built index (or its base) is the new base.
    fn after(previous: &SearchCell) -> Self {
        Self {
            built: OnceLock::new(),
            base: previous.built.get().or(previous.base.as_ref()).cloned(),
        }
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools.len())
            .field("namespaces", &self.namespaces.len())
            .field("services", &self.services.iter().flatten().count())
            .field("generation", &self.generation)
            .field("shut_down", &self.shut_down)
            .finish()
    }
}

impl Registry {
    pub(crate) fn service(&self, id: ServiceId) -> Option<&Arc<ServiceSlot>> {
        self.services.get(id.index()).and_then(Option::as_ref)
    }

    /// The index the next stored service gets.
    pub(crate) fn next_service_id(&self) -> ServiceId {
        ServiceId::new(self.services.len())
    }

    /// Every stored service with its id.
    pub(crate) fn stored(&self) -> impl Iterator<Item = (ServiceId, &Arc<ServiceSlot>)> {
        self.services
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| slot.as_ref().map(|slot| (ServiceId::new(i), slot)))
    }

    /// The services some tool routes to.
    pub(crate) fn routed(&self) -> HashSet<ServiceId> {
        self.tools.values().map(|entry| entry.service).collect()
    }

    /// Take the services that `remove` picks out of the snapshot, and every tool routed to them;
    /// the holes keep other indices stable. Returns the slots taken (each stops once no call in
    /// flight holds it any more) and the number of tools removed.
    pub(crate) fn take_services(
        &mut self,
        remove: impl Fn(ServiceId, &ServiceSlot) -> bool,
    ) -> (Vec<(ServiceId, Arc<ServiceSlot>)>, usize) {
        let mut taken = Vec::new();
        for (index, place) in self.services.iter_mut().enumerate() {
            let id = ServiceId::new(index);
            if place.as_ref().is_some_and(|slot| remove(id, slot))
                && let Some(slot) = place.take()
            {
                taken.push((id, slot));
            }
        }
        let before = self.tools.len();
        if !taken.is_empty() {
            self.tools
                .retain(|_, e| !taken.iter().any(|(id, _)| *id == e.service));
        }
        (taken, before - self.tools.len())
    }

    /// The namespace that owns a board name, for error messages.
    pub(crate) fn owner_of(&self, name: &str) -> Option<Option<String>> {
        self.tools
            .get(name)
            .map(|entry| entry.namespace.as_deref().map(str::to_string))
    }

    /// Rebuild the namespace index after a change: namespaces in order of first appearance among
    /// the tools, then those that hold a service but (now) no tools.
    pub(crate) fn reindex(&mut self) {
        let mut namespaces: IndexMap<Arc<str>, Vec<ArcStr>, RandomState> = IndexMap::default();
        for (name, entry) in &self.tools {
            if let Some(ns) = &entry.namespace {
                namespaces
                    .entry(Arc::clone(ns))
                    .or_default()
                    .push(name.clone());
            }
        }
        for slot in self.services.iter().flatten() {
            if slot.is_withdrawn() {
                continue;
            }
            if let Some(ns) = &slot.namespace {
                namespaces.entry(Arc::clone(ns)).or_default();
            }
        }
        self.namespaces = namespaces;
        self.generation += 1;
        self.search = Arc::new(SearchCell::after(&self.search));
    }

    /// The search index of this snapshot, built on first use (see [`SearchCell`]).
    pub(crate) fn search_index(&self) -> &SearchIndex {
        self.search.built.get_or_init(|| {
            let mut services: Vec<(usize, Vec<ToolDoc>)> = Vec::new();
            let mut at: HashMap<usize, usize, RandomState> = HashMap::default();
            for entry in self.tools.values() {
                let key = entry.service.index();
                let doc = ToolDoc::new(
                    entry.tool.clone(),
                    entry.original.as_str(),
                    entry.namespace.clone(),
                );
                let i = *at.entry(key).or_insert_with(|| {
                    services.push((key, Vec::new()));
                    services.len() - 1
                });
                services[i].1.push(doc);
            }
            let base = self.search.base.clone().unwrap_or_default();
            base.rebuilt(services)
        })
    }

    pub(crate) fn known_namespaces(&self) -> String {
        if self.namespaces.is_empty() {
            return "none".to_string();
        }
        let names: Vec<&str> = self.namespaces.keys().map(AsRef::as_ref).collect();
        names.join(", ")
    }
}
