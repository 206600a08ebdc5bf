//! Hybrid `search_tools` (cargo feature `embed`): the board's BM25F results fused with the
//! built-in static embedding's cosine ([`pegboard_embed::hybrid`]).
//!
//! The tools' vectors are kept with the board generation they were computed at; the first
//! search after a change of the board (a server joined, left or changed its tools) recomputes
//! them, reusing the vector of every tool whose text is unchanged, so only the new server's
//! tools are embedded. A search is then one query embedding and one pass over the vectors.

use std::sync::{Arc, Mutex};

use pegboard::{
    PegBoard,
    search::{MAX_LIMIT, ToolDoc},
};
use pegboard_embed::{
    StaticModel,
    hybrid::{Expansion, Fusion, ToolVectors},
};

use crate::identity::Client;

/// One result: the tool and its namespace.
pub(crate) struct Hit {
    pub(crate) tool: pegboard::Tool,
    pub(crate) namespace: Option<Arc<str>>,
}

/// The vectors of the board's tools at one generation.
struct Built {
    generation: u64,
    vectors: Arc<ToolVectors>,
}

/// The hybrid ranker of one search mode.
pub(crate) struct Hybrid {
    model: &'static StaticModel,
    built: Mutex<Option<Built>>,
}

impl std::fmt::Debug for Hybrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hybrid").finish_non_exhaustive()
    }
}

impl Hybrid {
    /// The ranker, or `None` (logged) if the built-in table cannot be read.
    pub(crate) fn new() -> Option<Self> {
        match StaticModel::builtin() {
            Ok(model) => Some(Self {
                model,
                built: Mutex::new(None),
            }),
            Err(error) => {
                tracing::error!("tool search falls back to lexical ranking: {error}");
                None
            }
        }
    }

    /// The board's tool vectors, recomputed if the board changed since they were built.
    fn vectors(&self, board: &PegBoard) -> Arc<ToolVectors> {
        let generation = board.generation();
        let mut built = match self.built.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(b) = built.as_ref()
            && b.generation == generation
        {
            return Arc::clone(&b.vectors);
        }
        let previous = built.as_ref().map(|b| Arc::clone(&b.vectors));
        let vectors = Arc::new(ToolVectors::build(
            self.model,
            board_docs(board),
            previous.as_deref(),
            &Expansion::default(),
        ));
        tracing::debug!(
            tools = vectors.len(),
            embedded = vectors.embedded(),
            "tool search: tool vectors computed"
        );
        *built = Some(Built {
            generation,
            vectors: Arc::clone(&vectors),
        });
        vectors
    }

    /// Compute the vectors now (at startup), so the first search does not pay for them.
    pub(crate) fn warm(&self, board: &PegBoard) {
        self.vectors(board);
    }

    /// The best `limit` tools for `query` among those `client` may see.
    pub(crate) fn search(
        &self,
        board: &PegBoard,
        client: &Client,
        query: &str,
        limit: usize,
    ) -> Vec<Hit> {
        let vectors = self.vectors(board);
        let lexical = board.search_index().search(query, MAX_LIMIT);
        let found = vectors.search(self.model, &lexical, query, MAX_LIMIT, &Fusion::default());
        let view = (!client.sees_everything()).then(|| client.view(board));
        found
            .into_iter()
            .filter(|f| {
                view.as_ref()
                    .is_none_or(|v| v.may_see_tool(f.doc.tool.name()))
            })
            .take(limit.clamp(1, MAX_LIMIT))
            .map(|f| Hit {
                tool: f.doc.tool.clone(),
                namespace: f.doc.namespace.clone(),
            })
            .collect()
    }
}

/// Every tool of the board with its original name, namespace and its server's description.
fn board_docs(board: &PegBoard) -> Vec<(ToolDoc, Option<Arc<str>>)> {
    let services = board.services();
    board
        .get_all_tools()
        .into_iter()
        .filter_map(|tool| {
            let (index, original) = board.get_tool_route(tool.name())?;
            let service = services.iter().find(|s| s.index == index);
            let namespace = service.and_then(|s| s.namespace.as_deref()).map(Arc::from);
            let summary = service.and_then(|s| s.summary.as_deref()).map(Arc::from);
            Some((ToolDoc::new(tool, original, namespace), summary))
        })
        .collect()
}
