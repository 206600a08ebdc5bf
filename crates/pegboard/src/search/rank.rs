//! BM25F over all segments, with statistics summed across segments at query time.
//!
//! Each tool's score for a query term is `idf * tf / (k1 + tf)`, where `tf` is the sum over
//! fields of `weight(field) * count / (1 - b + b * length / average_length(field))`
//! (Robertson & Zaragoza's BM25F): one saturation for the whole tool, so a word repeated across
//! name and description does not count twice as much as one said once in the name.

use std::{cmp::Ordering, sync::Arc};

use super::{config::FIELDS, segment::Segment};

/// One term of a (possibly expanded) query and how much it counts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QueryTerm {
    pub(crate) text: Arc<str>,
    pub(crate) weight: f32,
}

/// A scored tool: segment position, tool position in the segment, score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Hit {
    pub(crate) segment: u32,
    pub(crate) doc: u32,
    pub(crate) score: f32,
}

/// The parameters of BM25F, taken from the index's configuration.
pub(crate) struct Bm25f {
    pub(crate) weights: [f32; FIELDS],
    pub(crate) k1: f32,
    pub(crate) b: f32,
}

/// Corpus statistics summed over segments.
pub(crate) struct Stats {
    pub(crate) docs: f32,
    pub(crate) avg_len: [f32; FIELDS],
}

impl Stats {
    pub(crate) fn of(segments: &[Arc<Segment>]) -> Self {
        let docs: usize = segments.iter().map(|s| s.len()).sum();
        let mut avg_len = [0.0f32; FIELDS];
        for (f, avg) in avg_len.iter_mut().enumerate() {
            let sum: u64 = segments.iter().map(|s| s.len_sum[f]).sum();
            // A field no tool has gets an average of 1 so that normalisation stays finite.
            *avg = if docs == 0 || sum == 0 {
                1.0
            } else {
                sum as f32 / docs as f32
            };
        }
        Self {
            docs: docs as f32,
            avg_len,
        }
    }

    /// Robertson–Spärck Jones IDF, never negative.
    pub(crate) fn idf(&self, df: u32) -> f32 {
        let df = df as f32;
        (1.0 + (self.docs - df + 0.5) / (df + 0.5)).ln()
    }
}

/// A term's id in each segment and its document frequency over all of them.
pub(crate) struct Resolved {
    pub(crate) ids: Vec<Option<u32>>,
    pub(crate) df: u32,
}

pub(crate) fn resolve(segments: &[Arc<Segment>], text: &str) -> Resolved {
    let ids: Vec<Option<u32>> = segments.iter().map(|s| s.term(text)).collect();
    let df = segments
        .iter()
        .zip(&ids)
        .filter_map(|(s, id)| id.map(|id| s.df(id)))
        .sum();
    Resolved { ids, df }
}

/// Scores every tool that holds at least one query term; returns them unordered.
pub(crate) fn score(
    segments: &[Arc<Segment>],
    stats: &Stats,
    params: &Bm25f,
    terms: &[QueryTerm],
) -> Vec<Hit> {
    let resolved: Vec<(Resolved, f32)> = terms
        .iter()
        .map(|term| {
            let r = resolve(segments, &term.text);
            let factor = term.weight * stats.idf(r.df);
            (r, factor)
        })
        .collect();
    let mut hits = Vec::new();
    let mut acc: Vec<f32> = Vec::new();
    for (s, segment) in segments.iter().enumerate() {
        acc.clear();
        acc.resize(segment.len(), 0.0);
        let mut any = false;
        for (r, factor) in &resolved {
            let Some(id) = r.ids[s] else { continue };
            if *factor <= 0.0 {
                continue;
            }
            any = true;
            let (docs, freqs) = segment.postings(id);
            for (&doc, tf) in docs.iter().zip(freqs) {
                let lens = &segment.lens[doc as usize];
                let mut weighted = 0.0f32;
                for f in 0..FIELDS {
                    if tf[f] != 0 {
                        let norm =
                            1.0 - params.b + params.b * f32::from(lens[f]) / stats.avg_len[f];
                        weighted += params.weights[f] * f32::from(tf[f]) / norm.max(1e-3);
                    }
                }
                acc[doc as usize] += factor * weighted / (params.k1 + weighted);
            }
        }
        if any {
            let segment_index = u32::try_from(s).unwrap_or(u32::MAX);
            hits.extend((0u32..).zip(&acc).filter(|&(_, &score)| score > 0.0).map(
                |(doc, &score)| Hit {
                    segment: segment_index,
                    doc,
                    score,
                },
            ));
        }
    }
    hits
}

/// Best first; equal scores in board order (segment, then tool), so results are deterministic.
pub(crate) fn by_rank(a: &Hit, b: &Hit) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then(a.segment.cmp(&b.segment))
        .then(a.doc.cmp(&b.doc))
}

/// Keeps the best `k` hits, sorted.
pub(crate) fn top(mut hits: Vec<Hit>, k: usize) -> Vec<Hit> {
    if hits.len() > k && k > 0 {
        hits.select_nth_unstable_by(k - 1, by_rank);
        hits.truncate(k);
    }
    hits.sort_unstable_by(by_rank);
    hits.truncate(k);
    hits
}
