//! A client's view of the board: the tools it may see and the servers whose resources it may
//! see, computed once per board generation and shared by all its requests.
//!
//! Built from the board's snapshot when [`pegboard::PegBoard::generation`] has moved since the
//! last build; otherwise a request pays one atomic load. The generation is read *before* the
//! board, so a view never carries a newer generation than its contents: at worst a view built
//! during a change is rebuilt once more.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwapOption;
use bytes::Bytes;
use foldhash::fast::RandomState;
use pegboard::{PegBoard, Tool};

use super::pattern::ToolPatterns;

/// What one client sees of the board at one generation.
#[derive(Debug)]
pub struct ClientView {
    generation: u64,
    sees_everything: bool,
    resources: bool,
    tools: Vec<Tool>,
    names: HashSet<Arc<str>, RandomState>,
    namespaces: HashSet<Arc<str>, RandomState>,
    rendered: OnceLock<Bytes>,
    fingerprint: OnceLock<String>,
}

impl ClientView {
    /// The view of `board` through `patterns` (`resources: false` hides every resource).
    pub fn build(patterns: &ToolPatterns, resources: bool, board: &PegBoard) -> Self {
        // Read first: the contents below are of this generation or a later one (see the module).
        let generation = board.generation();
        let tools: Vec<Tool> = board
            .get_all_tools()
            .into_iter()
            .filter(|t| patterns.is_visible(t.name()))
            .collect();
        let names = tools.iter().map(|t| Arc::from(t.name())).collect();
        let namespaces = board
            .list_namespaces()
            .into_iter()
            .filter(|ns| {
                board
                    .list_tools_in_namespace(ns)
                    .iter()
                    .any(|name| patterns.is_visible(name))
            })
            .map(Arc::from)
            .collect();
        Self {
            generation,
            sees_everything: patterns.sees_everything(),
            resources,
            tools,
            names,
            namespaces,
            rendered: OnceLock::new(),
            fingerprint: OnceLock::new(),
        }
    }

    /// The board generation this view was built at.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The tools this client may see, in board order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Whether the client may see (and call) the tool the board lists as `name`: one hash
    /// lookup. A tool it may not see must be answered exactly as one that does not exist.
    pub fn may_see_tool(&self, name: &str) -> bool {
        self.sees_everything || self.names.contains(name)
    }

    /// Whether the tools this client sees differ from those of `earlier` (names, order or
    /// definitions). The `list_changed` feed keeps, per client, the view it last announced and
    /// sends `notifications/tools/list_changed` only when this is true: a change elsewhere on
    /// the board is not announced to a client that cannot see it. (Keep your own `earlier`: the
    /// [`ViewCache`] may already hold the new view, built by a request.)
    pub fn tools_differ_from(&self, earlier: &ClientView) -> bool {
        self.tools != earlier.tools
    }

    /// A fingerprint of the tools this client sees: their names and definitions, in name order,
    /// SHA-256; the same in every process. A session taken over by another replica compares
    /// what it was last answered with what that replica shows. Unlike
    /// [`tools_differ_from`](Self::tools_differ_from) it leaves the order out: the board lists
    /// tools as their servers joined, which differs from replica to replica with the same
    /// servers. Computed once per view.
    pub fn fingerprint(&self) -> &str {
        self.fingerprint.get_or_init(|| {
            use sha2::{Digest, Sha256};
            let mut tools: Vec<(&str, String)> = self
                .tools
                .iter()
                .map(|t| (t.name(), serde_json::Value::Object(t.to_json()).to_string()))
                .collect();
            tools.sort_unstable();
            let mut hash = Sha256::new();
            for (_, definition) in tools {
                // The definition whole, as JSON (its name in it), one line each: compact JSON
                // has no newline, so no two lists hash alike by where one definition ends.
                hash.update(definition);
                hash.update(b"\n");
            }
            hex::encode(&hash.finalize()[..16])
        })
    }

    /// Keep only the tools this client may see, in their order: for `tools/list`, search
    /// results and `list_changed` payloads built from the board (e.g. [`PegBoard::mcp_tools`]).
    pub fn retain_tools<T>(&self, items: &mut Vec<T>, name_of: impl Fn(&T) -> &str) {
        if !self.sees_everything {
            items.retain(|t| self.names.contains(name_of(t)));
        }
    }

    /// Whether the client may see at least one tool of the server with `namespace`.
    pub fn may_see_tools_of(&self, namespace: &str) -> bool {
        self.sees_everything || self.namespaces.contains(namespace)
    }

    /// Whether the client may see the resources of the server with `namespace`, judged by its
    /// tools alone: it may when it may see at least one of the server's tools (and its
    /// `resources` is not `false`). A server whose tools are all hidden may still share its
    /// resources through a visible prompt: see [`ClientView::may_see_resources_with_prompts`].
    pub fn may_see_resources_of(&self, namespace: &str) -> bool {
        self.resources && (self.sees_everything || self.namespaces.contains(namespace))
    }

    /// [`may_see_resources_of`](Self::may_see_resources_of), also counting the server's
    /// prompts: `prompts` are the board names of the prompts of the server with `namespace`.
    pub fn may_see_resources_with_prompts<'a>(
        &self,
        namespace: &str,
        patterns: &ToolPatterns,
        prompts: impl IntoIterator<Item = &'a str>,
    ) -> bool {
        self.may_see_resources_of(namespace)
            || (self.resources && prompts.into_iter().any(|p| patterns.is_visible(p)))
    }

    /// The client's `tools/list` as the front sends it, rendered once per view by `render`
    /// (from [`ClientView::tools`]) and shared by every request until the board changes.
    pub fn rendered(&self, render: impl FnOnce(&ClientView) -> Bytes) -> Bytes {
        self.rendered.get_or_init(|| render(self)).clone()
    }
}

/// The last view built for one client: [`ViewCache::view`] reuses it while the board's
/// generation is unchanged.
#[derive(Debug, Default)]
pub struct ViewCache {
    current: ArcSwapOption<ClientView>,
}

impl ViewCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client's view of `board` now: the cached one if the board has not changed since it
    /// was built, else a new one (built here, on the caller's thread, once per change).
    pub fn view(
        &self,
        patterns: &ToolPatterns,
        resources: bool,
        board: &PegBoard,
    ) -> Arc<ClientView> {
        if let Some(view) = &*self.current.load()
            && view.generation == board.generation()
        {
            return Arc::clone(view);
        }
        let view = Arc::new(ClientView::build(patterns, resources, board));
        self.current.store(Some(Arc::clone(&view)));
        view
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn build() {
        use crate::policy::{ClientView, ToolPatterns};
        let board = pegboard::PegBoard::new();
        let view = ClientView::build(&ToolPatterns::new(["docs-*"]).unwrap(), true, &board);
        assert!(view.tools().is_empty());
        assert!(!view.may_see_tool("docs-search"));
    }
}
