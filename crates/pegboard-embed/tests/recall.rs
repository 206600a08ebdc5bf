//! Recall floors of the hybrid ranking (the built-in fusion and expansion) on the held-out
//! sets: BFCL's held-out half (the fusion was chosen on the other half) and MetaTool (never
//! tuned on). The floors are what `examples/hybrid_recall.rs` measured, minus a small margin,
//! so a change that loses recall fails here. Exact names must always come first.

mod common;

use common::eval::{self, Ranking, board, evaluate, exact_names, is_tuning};
use pegboard_embed::hybrid::{Expansion, Fusion};

// Measured (examples/hybrid_recall.rs, the output-distilled table): BFCL held-out hit@1 0.681,
// hit@5 0.878, R@1 0.643, R@5 0.855, MRR 0.763; MetaTool hit@1 0.463, hit@5 0.674, MRR 0.557
// (one tool a request there, so R@k is hit@k). Floors two points below.
const BFCL_HIT1: f64 = 0.66;
const BFCL_HIT5: f64 = 0.85;
const BFCL_R1: f64 = 0.62;
const BFCL_R5: f64 = 0.83;
const BFCL_MRR: f64 = 0.74;
const META_HIT1: f64 = 0.44;
const META_HIT5: f64 = 0.65;
const META_MRR: f64 = 0.53;

#[test]
fn bfcl_held_out_recall_floor() {
    let bfcl = eval::bfcl();
    let b = board(&bfcl.tools, &Expansion::default());
    let held_out = bfcl.queries.iter().filter(|q| !is_tuning(&q.id));
    let m = evaluate(&b, &Ranking::Hybrid(Fusion::default()), held_out);
    let lexical = evaluate(
        &b,
        &Ranking::Lexical,
        bfcl.queries.iter().filter(|q| !is_tuning(&q.id)),
    );
    println!("{}\n{}", m.row("hybrid"), lexical.row("lexical"));
    assert!(m.h1() >= BFCL_HIT1, "hit@1 {:.4} < {BFCL_HIT1}", m.h1());
    assert!(m.h5() >= BFCL_HIT5, "hit@5 {:.4} < {BFCL_HIT5}", m.h5());
    assert!(m.r1() >= BFCL_R1, "recall@1 {:.4} < {BFCL_R1}", m.r1());
    assert!(m.r5() >= BFCL_R5, "recall@5 {:.4} < {BFCL_R5}", m.r5());
    assert!(m.mrr() >= BFCL_MRR, "MRR {:.4} < {BFCL_MRR}", m.mrr());
    assert!(
        m.h5() > lexical.h5() && m.h1() > lexical.h1(),
        "hybrid finds more than lexical alone"
    );
}

#[test]
fn metatool_recall_floor() {
    let metatool = eval::metatool();
    let b = board(&metatool.tools, &Expansion::default());
    let m = evaluate(&b, &Ranking::Hybrid(Fusion::default()), &metatool.queries);
    println!("{}", m.row("hybrid"));
    assert!(m.h1() >= META_HIT1, "hit@1 {:.4} < {META_HIT1}", m.h1());
    assert!(m.h5() >= META_HIT5, "hit@5 {:.4} < {META_HIT5}", m.h5());
    assert!(m.mrr() >= META_MRR, "MRR {:.4} < {META_MRR}", m.mrr());
}

#[test]
fn exact_names_always_first() {
    for tools in [eval::bfcl().tools, eval::metatool().tools] {
        let (asked, missed) = exact_names(&tools, &Ranking::Hybrid(Fusion::default()));
        assert!(asked > 0);
        assert!(
            missed.is_empty(),
            "{} of {asked} exact names not first: {:?}",
            missed.len(),
            &missed[..missed.len().min(10)]
        );
    }
}

#[test]
fn similar_texts_are_closer_than_unrelated_ones() {
    assert!(
        eval::cosine("will it rain tomorrow", "daily weather forecast for a city")
            > eval::cosine(
                "will it rain tomorrow",
                "delete a branch of a git repository"
            )
    );
}
