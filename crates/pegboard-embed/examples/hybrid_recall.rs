//! Recall of hybrid tool search (BM25F + the built-in static embedding) against the lexical
//! ranking, on BFCL's held-out half and on MetaTool (never tuned on).
//!
//! `cargo run --release -p pegboard-embed --example hybrid_recall` prints the table in
//! docs/tool-search.md; `-- --tune` also prints the grid that chose the fusion and the
//! expansion, measured on BFCL's tuning half only. Columns: hit@1 / hit@5 (a request counts when
//! a tool it needs is first / among the first five: the recall@1/@5), R@1 / R@5 (the
//! share of the tools it needs found there; lower for BFCL's requests that need several), MRR.
//! `PEGBOARD_EMBED_DIR=DIR` evaluates the table in DIR (`vocab.txt`, `vectors.bin`) instead of
//! the built-in one, to compare tables without rebuilding.

#[path = "../tests/common/eval.rs"]
mod eval;

use eval::{Ranking, board, evaluate, exact_names, is_tuning};
use pegboard_embed::hybrid::{Expansion, Fusion};

fn header(title: &str) {
    println!("\n{title}\n");
    println!(
        "| {:<46} | {:>7} | {:>7} | {:>7} | {:>7} | {:>6} |",
        "ranking", "hit@1", "hit@5", "R@1", "R@5", "MRR"
    );
    println!(
        "|{}|---------|---------|---------|---------|--------|",
        "-".repeat(48)
    );
}

fn main() {
    let tune = std::env::args().any(|a| a == "--tune");
    let bfcl = eval::bfcl();
    let metatool = eval::metatool();
    let default = Ranking::Hybrid(Fusion::default());

    if tune {
        let tuning: Vec<_> = bfcl.queries.iter().filter(|q| is_tuning(&q.id)).collect();
        header(&format!(
            "BFCL tuning half ({} requests): expansions, weighted 0.5",
            tuning.len()
        ));
        let expansions = [
            (
                "name + description",
                Expansion {
                    parameters: false,
                    parameter_descriptions: false,
                    server: false,
                    namespace: false,
                    name_weight: 0.0,
                },
            ),
            (
                "+ parameter names",
                Expansion {
                    parameters: true,
                    parameter_descriptions: false,
                    server: false,
                    namespace: false,
                    name_weight: 0.0,
                },
            ),
            (
                "+ parameter names and descriptions",
                Expansion {
                    parameters: true,
                    parameter_descriptions: true,
                    server: false,
                    namespace: false,
                    name_weight: 0.0,
                },
            ),
            (
                "+ parameter names, name weight 0.5",
                Expansion {
                    parameters: true,
                    parameter_descriptions: false,
                    server: false,
                    namespace: false,
                    name_weight: 0.5,
                },
            ),
        ];
        for (name, expansion) in &expansions {
            let b = board(&bfcl.tools, expansion);
            println!(
                "{}",
                evaluate(&b, &default, tuning.iter().copied()).row(name)
            );
        }
        header("BFCL tuning half: fusions (default expansion)");
        let b = board(&bfcl.tools, &Expansion::default());
        println!(
            "{}",
            evaluate(&b, &Ranking::Lexical, tuning.iter().copied()).row("lexical (BM25F, today's)")
        );
        println!(
            "{}",
            evaluate(&b, &Ranking::Embedding, tuning.iter().copied()).row("embedding only")
        );
        for w in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8] {
            let r = Ranking::Hybrid(Fusion::Weighted { lexical: w });
            println!(
                "{}",
                evaluate(&b, &r, tuning.iter().copied()).row(&format!("weighted, lexical {w}"))
            );
        }
        for (k, s) in [
            (60.0, 1.0),
            (60.0, 0.5),
            (20.0, 1.0),
            (20.0, 0.5),
            (5.0, 0.5),
        ] {
            let r = Ranking::Hybrid(Fusion::Rrf { k, semantic: s });
            println!(
                "{}",
                evaluate(&b, &r, tuning.iter().copied()).row(&format!("RRF k {k}, semantic {s}"))
            );
        }
    }

    let b = board(&bfcl.tools, &Expansion::default());
    let held_out: Vec<_> = bfcl.queries.iter().filter(|q| !is_tuning(&q.id)).collect();
    header(&format!(
        "BFCL held-out half: {} tools, {} requests",
        bfcl.tools.len(),
        held_out.len()
    ));
    for (name, r) in [
        ("lexical (BM25F, today's)", Ranking::Lexical),
        ("embedding only", Ranking::Embedding),
        ("hybrid (default)", default.clone()),
    ] {
        println!("{}", evaluate(&b, &r, held_out.iter().copied()).row(name));
    }
    println!(
        "{}",
        evaluate(
            &b,
            &Ranking::Hybrid(Fusion::Rrf {
                k: 60.0,
                semantic: 1.0
            }),
            held_out.iter().copied()
        )
        .row("hybrid, RRF k 60")
    );

    let m = board(&metatool.tools, &Expansion::default());
    header(&format!(
        "MetaTool (never tuned on): {} tools, {} requests",
        metatool.tools.len(),
        metatool.queries.len()
    ));
    for (name, r) in [
        ("lexical (BM25F, today's)", Ranking::Lexical),
        ("embedding only", Ranking::Embedding),
        ("hybrid (default)", default.clone()),
    ] {
        println!("{}", evaluate(&m, &r, &metatool.queries).row(name));
    }
    println!(
        "{}",
        evaluate(
            &m,
            &Ranking::Hybrid(Fusion::Rrf {
                k: 60.0,
                semantic: 1.0
            }),
            &metatool.queries
        )
        .row("hybrid, RRF k 60")
    );

    for (name, tools) in [("BFCL", &bfcl.tools), ("MetaTool", &metatool.tools)] {
        let (asked, missed) = exact_names(tools, &default);
        println!(
            "\n{name} exact names (hybrid): {} of {asked} first",
            asked - missed.len()
        );
        if !missed.is_empty() {
            eprintln!("not first: {:?}", &missed[..missed.len().min(20)]);
        }
    }
}
