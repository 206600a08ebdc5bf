//! Writes what the recall evaluation sees, for the comparison with the teacher transformer in
//! `build/ceiling.py`: for BFCL and MetaTool, each tool's embedded text (the default
//! [`Expansion`]) and each request with its split, its relevant tools and the lexical (BM25F)
//! ranking's hits and scores.
//!
//! `cargo run --release -p pegboard-embed --example hybrid_dump -- DIR` writes `DIR/bfcl.json`
//! and `DIR/metatool.json`.

#[path = "../tests/common/eval.rs"]
mod eval;

use std::{collections::HashMap, path::PathBuf};

use eval::is_tuning;
use pegboard::search::{MAX_LIMIT, SearchIndex, ToolDoc};
use pegboard_embed::hybrid::{Expansion, tool_text};
use serde_json::json;

fn main() {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: hybrid_dump DIR");
        std::process::exit(2);
    };
    for (name, set) in [("bfcl", eval::bfcl()), ("metatool", eval::metatool())] {
        let docs: Vec<ToolDoc> = set
            .tools
            .iter()
            .map(|t| ToolDoc::new(t.clone(), t.name(), None))
            .collect();
        let index: HashMap<&str, usize> = set
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name(), i))
            .collect();
        let lexical = SearchIndex::new().with_service(0, docs.clone());
        let tools: Vec<_> = docs
            .iter()
            .map(|d| json!({"name": d.tool.name(), "text": tool_text(d, None, &Expansion::default())}))
            .collect();
        let queries: Vec<_> = set
            .queries
            .iter()
            .map(|q| {
                let split = match (name, is_tuning(&q.id)) {
                    ("metatool", _) => "held-out",
                    (_, true) => "tuning",
                    (_, false) => "held-out",
                };
                let hits: Vec<_> = lexical
                    .search(&q.text, MAX_LIMIT)
                    .iter()
                    .map(|h| json!([index[h.tool.name()], h.score]))
                    .collect();
                let relevant: Vec<_> = q
                    .relevant
                    .iter()
                    .filter_map(|r| index.get(r.as_str()))
                    .collect();
                json!({"id": q.id, "text": q.text, "split": split, "relevant": relevant, "hits": hits})
            })
            .collect();
        let path = dir.join(format!("{name}.json"));
        let body = json!({"tools": tools, "queries": queries}).to_string();
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
        eprintln!("wrote {}", path.display());
    }
}
