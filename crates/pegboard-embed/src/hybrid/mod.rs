//! Hybrid ranking: PegBoard's lexical ranking (BM25F) and the static embedding's cosine, fused.
//!
//! [`ToolVectors`] holds one vector per tool, computed from the tool's text (name split into
//! words, title, description, parameter names and descriptions, its server's description; see
//! [`Expansion`]) when the tools change; a tool whose text is unchanged keeps its vector (keyed
//! by a hash of the text), so a server joining costs only its own tools. A search is then one
//! query embedding, one pass of dot products, and the fusion with the lexical results
//! ([`ToolVectors::search`]):
//!
//! 1. tools the lexical ranking marked exact (the query is their name) first, in its order;
//! 2. then near-exact names (the query is the name but for case, spaces and separators:
//!    `read file` for `read_file`);
//! 3. then the rest by the fused score ([`Fusion`]).
//!
//! ```
//! use std::sync::Arc;
//! use pegboard::{Tool, search::{SearchIndex, ToolDoc, MAX_LIMIT}};
//! use pegboard_embed::{StaticModel, hybrid::{Expansion, Fusion, ToolVectors}};
//!
//! let schema = Arc::new(serde_json::Map::new());
//! let docs: Vec<ToolDoc> = [
//!     ("weather-get_forecast", "Daily weather forecast for a city"),
//!     ("fs-remove_file", "Delete a file from disk"),
//! ]
//! .into_iter()
//! .map(|(name, description)| {
//!     let tool = Tool::new(name, description, schema.clone());
//!     let (ns, original) = name.split_once('-').unwrap();
//!     ToolDoc::new(tool, original, Some(ns.into()))
//! })
//! .collect();
//! let lexical = SearchIndex::new().with_service(0, docs.clone());
//! let model = StaticModel::builtin().unwrap();
//! let vectors = ToolVectors::build(model, docs.into_iter().map(|d| (d, None)), None, &Expansion::default());
//!
//! let query = "will it rain tomorrow?";
//! let found = vectors.search(model, &lexical.search(query, MAX_LIMIT), query, 5, &Fusion::default());
//! assert_eq!(found[0].doc.tool.name(), "weather-get_forecast");
//! ```

use std::{collections::HashMap, sync::Arc};

use foldhash::fast::RandomState;
use pegboard::{
    ToolMatch,
    search::{MAX_LIMIT, MAX_QUERY_BYTES, ToolDoc},
};

use crate::{StaticModel, dot};

#[cfg(test)]
mod tests;
mod text;

pub use text::tool_text;
use text::{cut, embed_tool, name_key, name_words, text_hash};

/// How the lexical and the embedding rankings are combined.
#[derive(Clone, Debug, PartialEq)]
pub enum Fusion {
    /// `w_lex * bm25 / best_bm25 + (1 - w_lex) * cosine`: the lexical score scaled to the
    /// query's best, and the cosine as it is. A tool the lexical ranking did not return
    /// counts 0 on its side.
    Weighted {
        /// Weight of the lexical side, 0 to 1.
        lexical: f32,
    },
    /// Reciprocal-rank fusion: `1 / (k + lexical rank) + semantic / (k + cosine rank)`.
    Rrf {
        /// The rank offset (60 in the original paper).
        k: f32,
        /// Weight of the embedding's rank relative to the lexical one.
        semantic: f32,
    },
}

impl Default for Fusion {
    /// A weighted sum, lexical 0.5: on the tuning half of BFCL, weights 0.3 to 0.6 were within
    /// half a point of each other and above reciprocal-rank fusion (docs/tool-search.md).
    fn default() -> Self {
        Fusion::Weighted { lexical: 0.5 }
    }
}

/// What of a tool, besides its name and description, goes into its vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Expansion {
    /// The names of its parameters, split into words.
    pub parameters: bool,
    /// The descriptions of its parameters.
    pub parameter_descriptions: bool,
    /// Its server's description (the first line of `instructions`, or its name and title).
    pub server: bool,
    /// Its namespace, split into words.
    pub namespace: bool,
    /// How much the name's own vector adds to the text's (0: the name counts as any words).
    pub name_weight: f32,
}

impl Default for Expansion {
    fn default() -> Self {
        Self {
            parameters: true,
            parameter_descriptions: true,
            server: true,
            namespace: true,
            name_weight: 0.0,
        }
    }
}

/// One result of [`ToolVectors::search`].
#[derive(Clone, Debug)]
pub struct Found<'a> {
    /// The tool, with its original name and namespace.
    pub doc: &'a ToolDoc,
    /// The fused score (comparable within one search only; exact names come first whatever it is).
    pub score: f32,
    /// The query was this tool's board or original name (as the lexical ranking said).
    pub exact: bool,
}

/// The vectors of a board's tools, and what finds a tool by its name.
pub struct ToolVectors {
    docs: Vec<ToolDoc>,
    dims: usize,
    vectors: Vec<f32>,
    hashes: Vec<u64>,
    by_name: HashMap<Arc<str>, u32, RandomState>,
    by_key: HashMap<String, Vec<u32>, RandomState>,
    embedded: usize,
}

impl std::fmt::Debug for ToolVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolVectors")
            .field("tools", &self.docs.len())
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

impl ToolVectors {
    /// Vectors for `tools` (each with its server's description, if any). A tool whose text is
    /// the same as one in `previous` takes that vector instead of embedding it again.
    pub fn build(
        model: &StaticModel,
        tools: impl IntoIterator<Item = (ToolDoc, Option<Arc<str>>)>,
        previous: Option<&ToolVectors>,
        expansion: &Expansion,
    ) -> Self {
        let dims = model.dims();
        let old: HashMap<u64, u32, RandomState> = previous
            .filter(|p| p.dims == dims)
            .map(|p| (0u32..).zip(&p.hashes).map(|(i, &h)| (h, i)).collect())
            .unwrap_or_default();
        let mut docs = Vec::new();
        let mut vectors = Vec::new();
        let mut hashes = Vec::new();
        let mut by_name: HashMap<Arc<str>, u32, RandomState> = HashMap::default();
        let mut by_key: HashMap<String, Vec<u32>, RandomState> = HashMap::default();
        let mut embedded = 0;
        for (i, (doc, server)) in (0u32..).zip(tools) {
            let text = tool_text(&doc, server.as_deref(), expansion);
            let name = name_words(&doc.original);
            let hash = text_hash(&text, &name, expansion.name_weight);
            match (previous, old.get(&hash)) {
                (Some(p), Some(&j)) => vectors.extend_from_slice(p.vector(j as usize)),
                _ => {
                    vectors.extend(embed_tool(model, &text, &name, expansion.name_weight));
                    embedded += 1;
                }
            }
            hashes.push(hash);
            by_name.insert(Arc::from(doc.tool.name()), i);
            for key in [name_key(doc.tool.name()), name_key(&doc.original)] {
                if key.is_empty() {
                    continue;
                }
                let list = by_key.entry(key).or_default();
                if !list.contains(&i) {
                    list.push(i);
                }
            }
            docs.push(doc);
        }
        Self {
            docs,
            dims,
            vectors,
            hashes,
            by_name,
            by_key,
            embedded,
        }
    }

    /// How many tools this build embedded; the others took their vector from `previous`.
    pub fn embedded(&self) -> usize {
        self.embedded
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Bytes held by the vectors (for memory reports).
    pub fn vector_bytes(&self) -> usize {
        self.vectors.len() * std::mem::size_of::<f32>()
    }

    fn vector(&self, i: usize) -> &[f32] {
        &self.vectors[i * self.dims..(i + 1) * self.dims]
    }

    /// The best tools for `query`, at most `limit` (clamped to [`MAX_LIMIT`]), given the
    /// lexical ranking's results for the same query (best first, as
    /// [`pegboard::search::SearchIndex::search`] returns them with `limit` [`MAX_LIMIT`]).
    ///
    /// Exact names first, then near-exact names, then by `fusion`. A blank query or a `limit`
    /// of 0 finds nothing; a query none of whose words the model knows is ranked lexically.
    pub fn search<'a>(
        &'a self,
        model: &StaticModel,
        lexical: &[ToolMatch],
        query: &str,
        limit: usize,
        fusion: &Fusion,
    ) -> Vec<Found<'a>> {
        let limit = limit.min(MAX_LIMIT);
        let query = cut(query.trim(), MAX_QUERY_BYTES);
        if limit == 0 || query.is_empty() || self.docs.is_empty() {
            return Vec::new();
        }
        let n = self.docs.len();
        let mut placed = vec![false; n];
        let mut results: Vec<Found<'a>> = Vec::with_capacity(limit);
        let docs = &self.docs;
        let push = |placed: &mut [bool],
                    i: usize,
                    score: f32,
                    exact: bool,
                    results: &mut Vec<Found<'a>>| {
            if !placed[i] && results.len() < limit {
                placed[i] = true;
                results.push(Found {
                    doc: &docs[i],
                    score,
                    exact,
                });
            }
        };

        // Lexical hits as (tool, score); exact names first, always.
        let hits: Vec<(usize, f32, bool)> = lexical
            .iter()
            .filter_map(|m| {
                let i = *self.by_name.get(m.tool.name())? as usize;
                Some((i, m.score, m.exact))
            })
            .collect();
        for &(i, score, _) in hits.iter().filter(|h| h.2) {
            push(&mut placed, i, score, true, &mut results);
        }
        let key = name_key(query);
        if let Some(list) = self.by_key.get(&key) {
            for &i in list {
                push(&mut placed, i as usize, 0.0, false, &mut results);
            }
        }
        if results.len() >= limit {
            return results;
        }

        let q = model.embed(query);
        if q.iter().all(|&x| x == 0.0) {
            for &(i, score, _) in &hits {
                push(&mut placed, i, score, false, &mut results);
            }
            return results;
        }
        let cosines: Vec<f32> = (0..n).map(|i| dot(&q, self.vector(i))).collect();
        let mut fused = vec![0.0f32; n];
        match *fusion {
            Fusion::Weighted { lexical } => {
                let w = if lexical.is_finite() {
                    lexical.clamp(0.0, 1.0)
                } else {
                    0.5
                };
                let best = hits.iter().map(|h| h.1).fold(0.0f32, f32::max);
                for (f, c) in fused.iter_mut().zip(&cosines) {
                    *f = (1.0 - w) * c;
                }
                if best > 0.0 {
                    for &(i, score, _) in &hits {
                        fused[i] += w * score / best;
                    }
                }
            }
            Fusion::Rrf { k, semantic } => {
                let k = if k.is_finite() { k.max(0.0) } else { 60.0 };
                let semantic = if semantic.is_finite() {
                    semantic.max(0.0)
                } else {
                    1.0
                };
                for (rank, &(i, _, _)) in hits.iter().enumerate() {
                    fused[i] += 1.0 / (k + 1.0 + rank as f32);
                }
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.sort_unstable_by(|&a, &b| {
                    cosines[b as usize]
                        .total_cmp(&cosines[a as usize])
                        .then(a.cmp(&b))
                });
                for (rank, &i) in order.iter().enumerate() {
                    fused[i as usize] += semantic / (k + 1.0 + rank as f32);
                }
            }
        }
        let mut order: Vec<u32> = (0..n as u32).filter(|&i| !placed[i as usize]).collect();
        let take = (limit - results.len()).min(order.len());
        let by_score = |a: &u32, b: &u32| {
            fused[*b as usize]
                .total_cmp(&fused[*a as usize])
                .then(a.cmp(b))
        };
        if take > 0 && order.len() > take {
            order.select_nth_unstable_by(take - 1, by_score);
            order.truncate(take);
        }
        order.sort_unstable_by(by_score);
        for i in order {
            push(
                &mut placed,
                i as usize,
                fused[i as usize],
                false,
                &mut results,
            );
        }
        results
    }
}
