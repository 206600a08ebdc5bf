//! Query expansion against word mismatch: pseudo-relevance feedback.
//!
//! The first ranking's best few tools are taken as relevant; the words that describe them best
//! (heavy in those tools, rare on the board) are added to the query at a reduced weight and the
//! board is ranked again (RM3-style). A request in the user's words thus also reaches tools that
//! share the vocabulary of the tools it found first.

use std::{collections::HashMap, sync::Arc};

use foldhash::fast::RandomState;

use super::{
    rank::{Hit, QueryTerm, Stats, resolve},
    segment::Segment,
};

/// Tools taken as relevant.
const FEEDBACK_DOCS: usize = 3;
/// Candidate words whose board-wide rarity is looked up (the costly part, one lookup per segment).
const FEEDBACK_CANDIDATES: usize = 24;
/// Words added to the query.
const FEEDBACK_TERMS: usize = 8;

/// The feedback terms for a first ranking `top` (best first), excluding the query's own terms.
pub(crate) fn feedback(
    segments: &[Arc<Segment>],
    stats: &Stats,
    top: &[Hit],
    query: &[QueryTerm],
    weight: f32,
) -> Vec<QueryTerm> {
    let top = &top[..top.len().min(FEEDBACK_DOCS)];
    let total: f32 = top.iter().map(|h| h.score).sum();
    if top.is_empty() || total <= 0.0 || weight <= 0.0 {
        return Vec::new();
    }
    // P(term | relevant), estimated from each tool's share of the first ranking's score.
    let mut mass: HashMap<&Arc<str>, (f32, f32), RandomState> = HashMap::default();
    for hit in top {
        let segment = &segments[hit.segment as usize];
        let (terms, weights) = segment.doc_terms(hit.doc);
        let length: f32 = weights.iter().sum();
        if length <= 0.0 {
            continue;
        }
        let share = hit.score / total;
        // Local rarity ranks the candidates before the board-wide look-up.
        let local_idf = |term: u32| {
            let n = segment.len() as f32;
            (1.0 + (n - segment.df(term) as f32 + 0.5) / (segment.df(term) as f32 + 0.5)).ln()
        };
        for (&term, &w) in terms.iter().zip(weights) {
            let text = &segment.term_text[term as usize];
            if text.starts_with('~') {
                continue;
            }
            let entry = mass.entry(text).or_insert((0.0, 0.0));
            entry.0 += share * w / length;
            entry.1 = entry.1.max(local_idf(term));
        }
    }
    for q in query {
        mass.remove(&q.text);
    }
    let mut candidates: Vec<(&Arc<str>, f32)> = mass
        .into_iter()
        .map(|(t, (p, idf))| (t, p * idf.max(0.1)))
        .collect();
    candidates.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    candidates.truncate(FEEDBACK_CANDIDATES);

    let mut scored: Vec<(&Arc<str>, f32)> = candidates
        .into_iter()
        .map(|(text, _)| (text, 0.0))
        .collect();
    for (text, score) in &mut scored {
        let df = resolve(segments, text).df;
        let p: f32 = top
            .iter()
            .map(|hit| {
                let segment = &segments[hit.segment as usize];
                let (terms, weights) = segment.doc_terms(hit.doc);
                let length: f32 = weights.iter().sum();
                segment
                    .term(text)
                    .and_then(|id| terms.binary_search(&id).ok())
                    .map_or(0.0, |i| hit.score / total * weights[i] / length.max(1e-6))
            })
            .sum();
        *score = p * stats.idf(df);
    }
    scored.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    scored.truncate(FEEDBACK_TERMS);
    let best = scored.first().map_or(0.0, |s| s.1);
    if best <= 0.0 {
        return Vec::new();
    }
    scored
        .into_iter()
        .filter(|(_, s)| *s > 0.0)
        .map(|(text, s)| QueryTerm {
            text: Arc::clone(text),
            weight: weight * s / best,
        })
        .collect()
}
