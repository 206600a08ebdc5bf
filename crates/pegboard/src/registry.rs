//! The board's state: one immutable snapshot, replaced as a whole on every change.

use std::sync::Arc;

use foldhash::fast::RandomState;
use indexmap::IndexMap;

use crate::{Tool, slot::ServiceSlot};

/// How a tool came onto the board: a refresh re-lists only what discovery put there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Discovered,
    Manual,
}

/// One tool on the board and where its calls go.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) tool: Tool,
    pub(crate) service: usize,
    pub(crate) original: Arc<str>,
    pub(crate) namespace: Option<Arc<str>>,
    pub(crate) origin: Origin,
}

/// A snapshot. Readers hold it without a lock; writers clone it, change the clone and swap it in.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    /// Board name -> entry, in registration order (the order sent to the LLM, stable for prompt caching).
    pub(crate) tools: IndexMap<Arc<str>, Entry, RandomState>,
    /// Namespace -> board names, derived from `tools` and `services` by [`Registry::reindex`].
    pub(crate) namespaces: IndexMap<Arc<str>, Vec<Arc<str>>, RandomState>,
    /// Stable indices: a removed service leaves `None`, never shifting the others.
    pub(crate) services: Vec<Option<Arc<ServiceSlot>>>,
    /// Bumped on every change of the tool set.
    pub(crate) generation: u64,
}

impl Registry {
    pub(crate) fn service(&self, index: usize) -> Option<&Arc<ServiceSlot>> {
        self.services.get(index).and_then(Option::as_ref)
    }

    /// Take the services that `remove` picks out of the snapshot (each stops once no call in
    /// flight holds it any more) and return their indices; the holes keep other indices stable.
    pub(crate) fn take_services(
        &mut self,
        remove: impl Fn(usize, &ServiceSlot) -> bool,
    ) -> Vec<usize> {
        let mut taken = Vec::new();
        for (index, place) in self.services.iter_mut().enumerate() {
            if place.as_ref().is_some_and(|slot| remove(index, slot)) {
                if let Some(slot) = place.take() {
                    slot.stop_watching();
                }
                taken.push(index);
            }
        }
        taken
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
        let mut namespaces: IndexMap<Arc<str>, Vec<Arc<str>>, RandomState> = IndexMap::default();
        for (name, entry) in &self.tools {
            if let Some(ns) = &entry.namespace {
                namespaces
                    .entry(Arc::clone(ns))
                    .or_default()
                    .push(Arc::clone(name));
            }
        }
        for slot in self.services.iter().flatten() {
            if let Some(ns) = &slot.namespace {
                namespaces.entry(Arc::clone(ns)).or_default();
            }
        }
        self.namespaces = namespaces;
        self.generation += 1;
    }

    pub(crate) fn known_namespaces(&self) -> String {
        if self.namespaces.is_empty() {
            return "none".to_string();
        }
        let names: Vec<&str> = self.namespaces.keys().map(AsRef::as_ref).collect();
        names.join(", ")
    }
}
