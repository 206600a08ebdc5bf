//! Tool search: find the few tools that fit a request among thousands.
//!
//! A [`SearchIndex`] holds the tools of a board, one segment per service. It is immutable and
//! cheap to clone (one reference count), so it lives in the board's snapshot; a change of one
//! service builds that service's segment only ([`SearchIndex::with_service`]), everything else
//! is shared with the previous snapshot.
//!
//! [`SearchIndex::search`] ranks:
//! 1. a tool whose name is the query, board name or original name (case-insensitive, exact
//!    case first), always first;
//! 2. then by BM25F over the tool name split into words (`get_weather`, `getWeather`,
//!    `get-weather`, `weather.get`), title, description, namespace, parameter names and
//!    parameter descriptions, with field weights and stemming;
//! 3. with word forms (first letters of long words) against word mismatch; pseudo-relevance
//!    feedback is available ([`SearchConfig::feedback`]) but off by default, since it lowers
//!    recall@1 on the benchmark. The `search_recall` example measures each step on the Berkeley
//!    Function Calling Leaderboard's tools.
//!
//! ```
//! use std::sync::Arc;
//! use pegboard::{Tool, search::{SearchIndex, ToolDoc}};
//!
//! let schema = Arc::new(serde_json::Map::new());
//! let weather = [
//!     Tool::new("weather-get_forecast", "Daily weather forecast for a city", schema.clone()),
//!     Tool::new("weather-get_alerts", "Storm and heat alerts for a US state", schema.clone()),
//! ];
//! let files = [Tool::new("fs-read_file", "Read a text file from disk", schema.clone())];
//! let doc = |tool: &Tool, ns: &str| {
//!     let original = tool.name().split_once('-').map_or(tool.name(), |(_, o)| o).to_string();
//!     ToolDoc::new(tool.clone(), original, Some(ns.into()))
//! };
//!
//! let index = SearchIndex::new()
//!     .with_service(0, weather.iter().map(|t| doc(t, "weather")))
//!     .with_service(1, files.iter().map(|t| doc(t, "fs")));
//!
//! let found = index.search("will it rain tomorrow? forecast please", 5);
//! assert_eq!(found[0].tool.name(), "weather-get_forecast");
//!
//! // An exact name, board or original, is always first.
//! assert_eq!(index.search("read_file", 5)[0].tool.name(), "fs-read_file");
//! assert!(index.search("read_file", 5)[0].exact);
//!
//! // Removing a service shares the other segments.
//! let smaller = index.without_service(1);
//! assert!(smaller.search("read_file", 5).is_empty());
//! ```
//!
//! # Bad input
//! An empty or blank query finds nothing; a `limit` of 0 finds nothing and one above
//! [`MAX_LIMIT`] is clamped to it; only the first [`MAX_QUERY_BYTES`] bytes and
//! [`MAX_QUERY_TERMS`] distinct words of a query are read, so a huge query costs no more than a
//! long one. Nothing panics.

mod analyze;
mod config;
mod expand;
mod rank;
mod segment;
#[cfg(test)]
mod tests;

use std::{collections::HashMap, sync::Arc};

use foldhash::fast::RandomState;

pub use config::{FieldWeights, SearchConfig};

use crate::Tool;
use analyze::Analyzer;
use rank::{Bm25f, Hit, QueryTerm, Stats};
use segment::Segment;

/// Results per search at most; a larger `limit` is clamped to this.
pub const MAX_LIMIT: usize = 100;
/// Bytes of a query read at most (cut at a character boundary); the rest is ignored.
pub const MAX_QUERY_BYTES: usize = 4096;
/// Distinct words of a query used at most (the first ones).
pub const MAX_QUERY_TERMS: usize = 48;

/// A tool as the index takes it: the tool (named as on the board), its original name, its namespace.
#[derive(Clone, Debug)]
pub struct ToolDoc {
    /// The tool, named as on the board (`web-search`).
    pub tool: Tool,
    /// The name the tool has on its server (`search`).
    pub original: Arc<str>,
    /// The namespace of its server, if any (`web`).
    pub namespace: Option<Arc<str>>,
}

impl ToolDoc {
    /// A tool with its original name and namespace.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pegboard::{Tool, search::ToolDoc};
    ///
    /// let tool = Tool::new("web-search", "Search the web", Arc::new(serde_json::Map::new()));
    /// let doc = ToolDoc::new(tool, "search", Some("web".into()));
    /// assert_eq!(&*doc.original, "search");
    /// ```
    pub fn new(tool: Tool, original: impl Into<Arc<str>>, namespace: Option<Arc<str>>) -> Self {
        Self {
            tool,
            original: original.into(),
            namespace,
        }
    }
}

/// One search result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolMatch {
    /// The tool, named as on the board.
    pub tool: Tool,
    /// Its namespace, if any.
    pub namespace: Option<Arc<str>>,
    /// Its name on its server.
    pub original: Arc<str>,
    /// The lexical score (BM25F, higher is better; comparable within one search only). An
    /// exact-name match keeps its lexical score, which may be 0, and is first all the same.
    pub score: f32,
    /// The query was this tool's board or original name.
    pub exact: bool,
}

/// The search index of a board: immutable, one segment per service, cheap to clone.
///
/// See the [module documentation](self) for an example.
#[derive(Clone)]
pub struct SearchIndex {
    inner: Arc<Inner>,
}

struct Inner {
    config: SearchConfig,
    analyzer: Analyzer,
    /// Segments by service key, ascending: the board's order.
    keys: Vec<usize>,
    segments: Vec<Arc<Segment>>,
}

impl Default for SearchIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("services", &self.inner.keys.len())
            .field("tools", &self.len())
            .finish_non_exhaustive()
    }
}

impl SearchIndex {
    /// An empty index with the default ranking.
    pub fn new() -> Self {
        Self::with_config(SearchConfig::default())
    }

    /// An empty index with the given ranking; every index derived from it keeps it.
    pub fn with_config(config: SearchConfig) -> Self {
        let analyzer = Analyzer::new(config.stemming, config.word_forms);
        Self {
            inner: Arc::new(Inner {
                config,
                analyzer,
                keys: Vec::new(),
                segments: Vec::new(),
            }),
        }
    }

    /// The ranking's configuration.
    pub fn config(&self) -> &SearchConfig {
        &self.inner.config
    }

    /// This index with the tools of service `key` replaced by `docs` (an empty `docs` removes
    /// the service). Only this service's tools are analysed; the other segments are shared.
    #[must_use]
    pub fn with_service(&self, key: usize, docs: impl IntoIterator<Item = ToolDoc>) -> Self {
        let docs: Vec<ToolDoc> = docs.into_iter().collect();
        if docs.is_empty() {
            return self.without_service(key);
        }
        let weights = self.inner.config.weights.as_array();
        let segment = Arc::new(Segment::build(
            docs,
            &self.inner.analyzer,
            &weights,
            self.inner.config.feedback,
        ));
        let mut keys = self.inner.keys.clone();
        let mut segments = self.inner.segments.clone();
        match keys.binary_search(&key) {
            Ok(i) => segments[i] = segment,
            Err(i) => {
                keys.insert(i, key);
                segments.insert(i, segment);
            }
        }
        self.derive(keys, segments)
    }

    /// This index without the tools of service `key`.
    #[must_use]
    pub fn without_service(&self, key: usize) -> Self {
        let Ok(i) = self.inner.keys.binary_search(&key) else {
            return self.clone();
        };
        let mut keys = self.inner.keys.clone();
        let mut segments = self.inner.segments.clone();
        keys.remove(i);
        segments.remove(i);
        self.derive(keys, segments)
    }

    /// An index of exactly `services` (key and tools), in key order, built from this one: a
    /// service whose tools are all the same shared [`Tool`]s as in this index (one pointer
    /// compare each), in the same order, keeps its segment; only the others are analysed. This
    /// is how a board's snapshot gets its index from the previous one.
    pub fn rebuilt(&self, mut services: Vec<(usize, Vec<ToolDoc>)>) -> Self {
        services.sort_unstable_by_key(|(key, _)| *key);
        let weights = self.inner.config.weights.as_array();
        let mut keys = Vec::with_capacity(services.len());
        let mut segments = Vec::with_capacity(services.len());
        for (key, docs) in services {
            if docs.is_empty() {
                continue;
            }
            let reusable = self.inner.keys.binary_search(&key).ok().and_then(|i| {
                let old = &self.inner.segments[i];
                let same = old.docs.len() == docs.len()
                    && old.docs.iter().zip(&docs).all(|(a, b)| {
                        a.tool.same(&b.tool)
                            && a.original == b.original
                            && a.namespace == b.namespace
                    });
                same.then(|| Arc::clone(old))
            });
            let segment = reusable.unwrap_or_else(|| {
                Arc::new(Segment::build(
                    docs,
                    &self.inner.analyzer,
                    &weights,
                    self.inner.config.feedback,
                ))
            });
            keys.push(key);
            segments.push(segment);
        }
        self.derive(keys, segments)
    }

    /// Whether service `key`'s segment is the very same (shared) in both indexes.
    #[doc(hidden)]
    pub fn shares_segment(&self, other: &SearchIndex, key: usize) -> bool {
        match (
            self.inner.keys.binary_search(&key),
            other.inner.keys.binary_search(&key),
        ) {
            (Ok(a), Ok(b)) => Arc::ptr_eq(&self.inner.segments[a], &other.inner.segments[b]),
            _ => false,
        }
    }

    fn derive(&self, keys: Vec<usize>, segments: Vec<Arc<Segment>>) -> Self {
        let config = self.inner.config.clone();
        let analyzer = Analyzer::new(config.stemming, config.word_forms);
        Self {
            inner: Arc::new(Inner {
                config,
                analyzer,
                keys,
                segments,
            }),
        }
    }

    /// Number of tools in the index.
    pub fn len(&self) -> usize {
        self.inner.segments.iter().map(|s| s.len()).sum()
    }

    /// Whether the index holds no tool.
    pub fn is_empty(&self) -> bool {
        self.inner.segments.is_empty()
    }

    /// The best tools for `query`, best first, at most `limit` (clamped to [`MAX_LIMIT`]).
    ///
    /// A tool whose board or original name is the query comes first; the others follow by
    /// score. An empty or blank query, or a `limit` of 0, finds nothing.
    pub fn search(&self, query: &str, limit: usize) -> Vec<ToolMatch> {
        let limit = limit.min(MAX_LIMIT);
        let query = cut(query.trim(), MAX_QUERY_BYTES);
        if limit == 0 || query.is_empty() {
            return Vec::new();
        }
        let exact = self.exact_matches(query);
        let mut hits = self.rank(query, limit + exact.len());
        let mut results: Vec<ToolMatch> = Vec::with_capacity(limit);
        for &(segment, doc) in &exact {
            let score = hits
                .iter()
                .find(|h| (h.segment, h.doc) == (segment, doc))
                .map_or(0.0, |h| h.score);
            results.push(self.to_match(segment, doc, score, true));
        }
        hits.retain(|h| !exact.contains(&(h.segment, h.doc)));
        for hit in hits {
            if results.len() >= limit {
                break;
            }
            results.push(self.to_match(hit.segment, hit.doc, hit.score, false));
        }
        results.truncate(limit);
        results
    }

    fn to_match(&self, segment: u32, doc: u32, score: f32, exact: bool) -> ToolMatch {
        let d = &self.inner.segments[segment as usize].docs[doc as usize];
        ToolMatch {
            tool: d.tool.clone(),
            namespace: d.namespace.clone(),
            original: Arc::clone(&d.original),
            score,
            exact,
        }
    }

    /// Tools named `query`: board name before original name, exact case before any case.
    fn exact_matches(&self, query: &str) -> Vec<(u32, u32)> {
        let name = query.trim_matches(|c: char| c == '`' || c == '"' || c == '\'');
        if name.is_empty() {
            return Vec::new();
        }
        let lower = name.to_lowercase();
        let mut found: Vec<(u8, u32, u32)> = Vec::new();
        for (s, segment) in (0u32..).zip(&self.inner.segments) {
            for &doc in segment.named(&lower) {
                let d = &segment.docs[doc as usize];
                let class = if d.tool.name() == name {
                    0
                } else if &*d.original == name {
                    1
                } else if d.tool.name().to_lowercase() == lower {
                    2
                } else {
                    3
                };
                found.push((class, s, doc));
            }
        }
        found.sort_unstable();
        found.into_iter().map(|(_, s, d)| (s, d)).collect()
    }

    /// The lexical ranking: BM25F, then feedback if configured; the best `k` hits.
    fn rank(&self, query: &str, k: usize) -> Vec<Hit> {
        let inner = &*self.inner;
        let config = &inner.config;
        let terms = query_terms(&inner.analyzer, query, config.word_form_weight);
        if terms.is_empty() {
            return Vec::new();
        }
        let segments = &inner.segments;
        let stats = Stats::of(segments);
        let params = Bm25f {
            weights: config.weights.as_array(),
            k1: config.k1.max(0.0),
            b: config.b.clamp(0.0, 1.0),
        };
        let hits = rank::score(segments, &stats, &params, &terms);
        if !config.feedback {
            return rank::top(hits, k);
        }
        let first = rank::top(hits, k.max(3));
        let extra = expand::feedback(segments, &stats, &first, &terms, config.feedback_weight);
        if extra.is_empty() {
            return rank::top(first, k);
        }
        let mut expanded = terms;
        expanded.extend(extra);
        rank::top(rank::score(segments, &stats, &params, &expanded), k)
    }
}

/// The distinct terms of a query, weighted by how often they occur (word forms at `form_weight`).
fn query_terms(analyzer: &Analyzer, query: &str, form_weight: f32) -> Vec<QueryTerm> {
    let mut terms: Vec<QueryTerm> = Vec::new();
    let mut seen: HashMap<Arc<str>, usize, RandomState> = HashMap::default();
    analyzer.terms(query, MAX_QUERY_TERMS * 4, |term, is_form| {
        let weight = if is_form { form_weight } else { 1.0 };
        if let Some(&i) = seen.get(term) {
            terms[i].weight += weight;
        } else if seen.len() < MAX_QUERY_TERMS * 2 {
            let text: Arc<str> = Arc::from(term);
            seen.insert(Arc::clone(&text), terms.len());
            terms.push(QueryTerm { text, weight });
        }
    });
    terms
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
