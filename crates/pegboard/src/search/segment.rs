//! One service's tools as an immutable inverted index.
//!
//! A board changes one service at a time, so the index is a list of segments, one per service,
//! shared between snapshots through `Arc`: adding a service builds only its segment. Statistics
//! that span segments (document frequencies, average field lengths) are summed at query time
//! for the few terms of a query, so no segment ever needs rebuilding because another changed.

use std::{collections::HashMap, sync::Arc};

use foldhash::fast::RandomState;
use serde_json::Value;

use super::{
    ToolDoc,
    analyze::{Analyzer, words},
    config::{FIELDS, Field},
};

/// At most this many words are read from one field of one tool: a server cannot make indexing slow.
const MAX_FIELD_WORDS: [usize; FIELDS] = [64, 64, 2048, 16, 256, 4096];
/// Nesting depth and count of schema properties read for the parameter fields.
const MAX_SCHEMA_DEPTH: usize = 4;
const MAX_PROPERTIES: usize = 256;

/// Term frequencies of one term in one tool, per field (saturating at 255).
pub(crate) type Freqs = [u8; FIELDS];

pub(crate) struct Segment {
    pub(crate) docs: Vec<ToolDoc>,
    /// Words per field per tool (saturating).
    pub(crate) lens: Vec<[u16; FIELDS]>,
    /// Sum of `lens` per field.
    pub(crate) len_sum: [u64; FIELDS],
    terms: HashMap<Arc<str>, u32, RandomState>,
    pub(crate) term_text: Vec<Arc<str>>,
    /// Postings of term `t`: `post_doc[offsets[t]..offsets[t + 1]]`, by tool order.
    offsets: Vec<u32>,
    post_doc: Vec<u32>,
    post_tf: Vec<Freqs>,
    /// Terms of tool `d` and their field-weighted frequency, for feedback: `fwd_*[fwd_offsets[d]..]`.
    fwd_offsets: Vec<u32>,
    fwd_term: Vec<u32>,
    fwd_weight: Vec<f32>,
    /// Lowercased board and original names -> tools, for exact-name matches.
    names: HashMap<Box<str>, Vec<u32>, RandomState>,
}

impl Segment {
    pub(crate) fn build(
        docs: Vec<ToolDoc>,
        analyzer: &Analyzer,
        weights: &[f32; FIELDS],
        forward: bool,
    ) -> Self {
        let mut terms: HashMap<Arc<str>, u32, RandomState> = HashMap::default();
        let mut term_text: Vec<Arc<str>> = Vec::new();
        let mut names: HashMap<Box<str>, Vec<u32>, RandomState> = HashMap::default();
        let mut lens = Vec::with_capacity(docs.len());
        let mut len_sum = [0u64; FIELDS];
        // (term, doc, field) for every occurrence; sorted, it becomes the postings.
        let mut hits: Vec<(u32, u32, u8)> = Vec::new();
        let mut cache: HashMap<Box<str>, (u32, Option<u32>), RandomState> = HashMap::default();
        for (doc, tool_doc) in (0u32..).zip(&docs) {
            for name in [tool_doc.tool.name(), &*tool_doc.original] {
                let entry = names.entry(name.to_lowercase().into()).or_default();
                if entry.last() != Some(&doc) {
                    entry.push(doc);
                }
            }
            let mut len = [0u16; FIELDS];
            for_each_field(tool_doc, |field, text| {
                let f = field as usize;
                words(text, MAX_FIELD_WORDS[f], |word| {
                    len[f] = len[f].saturating_add(1);
                    // Stemming is the costly part of indexing; a service repeats its words.
                    let ids = match cache.get(word) {
                        Some(ids) => *ids,
                        None => {
                            let mut ids = (u32::MAX, None);
                            analyzer.word_terms(word, |term, is_form| {
                                let id = intern(&mut terms, &mut term_text, term);
                                if is_form {
                                    ids.1 = Some(id);
                                } else {
                                    ids.0 = id;
                                }
                            });
                            cache.insert(word.into(), ids);
                            ids
                        }
                    };
                    hits.push((ids.0, doc, field as u8));
                    if let Some(form) = ids.1 {
                        hits.push((form, doc, field as u8));
                    }
                });
            });
            for f in 0..FIELDS {
                len_sum[f] += u64::from(len[f]);
            }
            lens.push(len);
        }
        hits.sort_unstable();

        let mut offsets = Vec::with_capacity(term_text.len() + 1);
        let mut post_doc: Vec<u32> = Vec::new();
        let mut post_tf: Vec<Freqs> = Vec::new();
        let mut last: Option<(u32, u32)> = None;
        for &(term, doc, field) in &hits {
            if last != Some((term, doc)) {
                while offsets.len() <= term as usize {
                    offsets.push(len_u32(post_doc.len()));
                }
                post_doc.push(doc);
                post_tf.push([0; FIELDS]);
                last = Some((term, doc));
            }
            if let Some(tf) = post_tf.last_mut() {
                tf[field as usize] = tf[field as usize].saturating_add(1);
            }
        }
        while offsets.len() <= term_text.len() {
            offsets.push(len_u32(post_doc.len()));
        }

        // The forward index (for feedback only): the same pairs ordered by tool.
        let (fwd_offsets, fwd_term, fwd_weight) = if forward {
            forward_index(docs.len(), &offsets, &post_doc, &post_tf, weights)
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };

        let mut segment = Self {
            docs,
            lens,
            len_sum,
            terms,
            term_text,
            offsets,
            post_doc,
            post_tf,
            fwd_offsets,
            fwd_term,
            fwd_weight,
            names,
        };
        segment.shrink();
        segment
    }

    fn shrink(&mut self) {
        self.terms.shrink_to_fit();
        self.names.shrink_to_fit();
        self.term_text.shrink_to_fit();
        self.offsets.shrink_to_fit();
        self.post_doc.shrink_to_fit();
        self.post_tf.shrink_to_fit();
        self.fwd_offsets.shrink_to_fit();
        self.fwd_term.shrink_to_fit();
        self.fwd_weight.shrink_to_fit();
    }

    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    pub(crate) fn term(&self, text: &str) -> Option<u32> {
        self.terms.get(text).copied()
    }

    /// Number of tools that hold `term` in any field.
    pub(crate) fn df(&self, term: u32) -> u32 {
        let t = term as usize;
        self.offsets[t + 1] - self.offsets[t]
    }

    pub(crate) fn postings(&self, term: u32) -> (&[u32], &[Freqs]) {
        let t = term as usize;
        let range = self.offsets[t] as usize..self.offsets[t + 1] as usize;
        (&self.post_doc[range.clone()], &self.post_tf[range])
    }

    /// The terms of one tool with their field-weighted frequencies.
    pub(crate) fn doc_terms(&self, doc: u32) -> (&[u32], &[f32]) {
        let d = doc as usize;
        if d + 1 >= self.fwd_offsets.len() {
            return (&[], &[]);
        }
        let range = self.fwd_offsets[d] as usize..self.fwd_offsets[d + 1] as usize;
        (&self.fwd_term[range.clone()], &self.fwd_weight[range])
    }

    /// Tools whose board or original name equals `lowercase_name` (compared lowercased).
    pub(crate) fn named(&self, lowercase_name: &str) -> &[u32] {
        self.names.get(lowercase_name).map_or(&[], Vec::as_slice)
    }
}

/// Per tool, its terms (ascending) and their field-weighted frequencies.
fn forward_index(
    docs: usize,
    offsets: &[u32],
    post_doc: &[u32],
    post_tf: &[Freqs],
    weights: &[f32; FIELDS],
) -> (Vec<u32>, Vec<u32>, Vec<f32>) {
    let mut pairs: Vec<(u32, u32, f32)> = Vec::with_capacity(post_doc.len());
    for term in 0..offsets.len().saturating_sub(1) {
        for i in offsets[term] as usize..offsets[term + 1] as usize {
            let weight = post_tf[i]
                .iter()
                .zip(weights)
                .map(|(&tf, w)| f32::from(tf) * w)
                .sum();
            pairs.push((post_doc[i], len_u32(term), weight));
        }
    }
    pairs.sort_unstable_by_key(|&(doc, term, _)| (doc, term));
    let mut fwd_offsets = Vec::with_capacity(docs + 1);
    let mut at = 0usize;
    for doc in 0..docs {
        fwd_offsets.push(len_u32(at));
        while at < pairs.len() && pairs[at].0 as usize == doc {
            at += 1;
        }
    }
    fwd_offsets.push(len_u32(pairs.len()));
    (
        fwd_offsets,
        pairs.iter().map(|p| p.1).collect(),
        pairs.iter().map(|p| p.2).collect(),
    )
}

/// The id of `term`, added to the dictionary if new.
fn intern(
    terms: &mut HashMap<Arc<str>, u32, RandomState>,
    term_text: &mut Vec<Arc<str>>,
    term: &str,
) -> u32 {
    if let Some(&id) = terms.get(term) {
        return id;
    }
    let id = len_u32(term_text.len());
    let text: Arc<str> = Arc::from(term);
    terms.insert(Arc::clone(&text), id);
    term_text.push(text);
    id
}

fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Calls `visit` with each field's text of a tool (a field may be visited several times).
fn for_each_field(doc: &ToolDoc, mut visit: impl FnMut(Field, &str)) {
    visit(Field::Name, &doc.original);
    if let Some(title) = doc.tool.title() {
        visit(Field::Title, title);
    }
    if let Some(description) = doc.tool.description() {
        visit(Field::Description, description);
    }
    if let Some(namespace) = &doc.namespace {
        visit(Field::Namespace, namespace);
    }
    let mut budget = MAX_PROPERTIES;
    if let Some(properties) = doc.tool.input_schema().get("properties") {
        visit_properties(properties, 0, &mut budget, &mut visit);
    }
}

/// Parameter names and their descriptions, nested objects and array items included.
fn visit_properties(
    properties: &Value,
    depth: usize,
    budget: &mut usize,
    visit: &mut impl FnMut(Field, &str),
) {
    let Some(properties) = properties.as_object() else {
        return;
    };
    for (name, schema) in properties {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        visit(Field::Parameters, name);
        for key in ["description", "title"] {
            if let Some(text) = schema.get(key).and_then(Value::as_str) {
                visit(Field::ParameterDescriptions, text);
            }
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            for text in values.iter().filter_map(Value::as_str).take(32) {
                visit(Field::ParameterDescriptions, text);
            }
        }
        if depth + 1 < MAX_SCHEMA_DEPTH {
            for nested in [
                schema.get("properties"),
                schema.get("items").and_then(|i| i.get("properties")),
            ]
            .into_iter()
            .flatten()
            {
                visit_properties(nested, depth + 1, budget, visit);
            }
        }
    }
}
