//! Latency of one hybrid search (lexical BM25F + query embedding + one pass over the tool
//! vectors + fusion) against the lexical search alone, at 1,000, 1,437 and 10,000 tools (BFCL's
//! tools under 10/15/100 namespaces, repeated as needed), over BFCL's 2,501 requests; p50 and
//! p99 per search, and the time and memory to build the vectors.
//!
//! `cargo run --release -p pegboard-embed --example hybrid_latency`

use std::{path::PathBuf, sync::Arc, time::Instant};

use pegboard::{
    Tool,
    search::{MAX_LIMIT, SearchIndex, ToolDoc},
};
use pegboard_embed::{
    StaticModel,
    hybrid::{Expansion, Fusion, ToolVectors},
};
use serde_json::Value;

fn read_jsonl(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pegboard/benches/data/bfcl")
        .join(name);
    std::fs::read_to_string(&path)
        .expect("BFCL data")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// Resident memory of this process (Linux `/proc/self/status`), in MB; 0 elsewhere.
fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let tools = read_jsonl("tools.jsonl");
    let queries: Vec<String> = read_jsonl("queries.jsonl")
        .iter()
        .map(|q| q["query"].as_str().expect("query").to_string())
        .collect();
    let before = rss_mb();
    let model = StaticModel::builtin().expect("built-in model");
    std::hint::black_box(model.embed("warm every page of the table? no: only the rows used"));
    println!(
        "resident memory: {before:.1} MB before the model, {:.1} MB after loading it (vocabulary map and scales; the table's pages are read on use)",
        rss_mb()
    );
    println!(
        "| tools | lexical p50 | lexical p99 | hybrid p50 | hybrid p99 | build vectors | vector bytes |"
    );
    println!(
        "|------:|------------:|------------:|-----------:|-----------:|--------------:|-------------:|"
    );
    for (total, services) in [(1_000usize, 10usize), (1_437, 15), (10_000, 100)] {
        let per = total.div_ceil(services);
        let mut docs: Vec<Vec<ToolDoc>> = Vec::new();
        let mut n = 0;
        for s in 0..services {
            let namespace: Arc<str> = format!("svc{s}").into();
            let mut service = Vec::new();
            for i in 0..per {
                if n == total {
                    break;
                }
                let t = &tools[(s * per + i * 7) % tools.len()];
                let original: Arc<str> = t["name"].as_str().expect("name").into();
                let schema = t["inputSchema"].as_object().cloned().unwrap_or_default();
                let tool = Tool::new(
                    format!("{namespace}-{original}"),
                    t["description"].as_str().unwrap_or_default().to_string(),
                    Arc::new(schema),
                );
                service.push(ToolDoc::new(tool, original, Some(Arc::clone(&namespace))));
                n += 1;
            }
            docs.push(service);
        }
        let index = docs
            .iter()
            .enumerate()
            .fold(SearchIndex::new(), |index, (k, d)| {
                index.with_service(k, d.clone())
            });
        let start = Instant::now();
        let vectors = ToolVectors::build(
            model,
            docs.into_iter().flatten().map(|d| (d, None)),
            None,
            &Expansion::default(),
        );
        let build = start.elapsed();
        let rss_vectors = rss_mb();
        let fusion = Fusion::default();
        let mut lexical = Vec::with_capacity(queries.len());
        let mut hybrid = Vec::with_capacity(queries.len());
        for q in &queries {
            let t = Instant::now();
            std::hint::black_box(index.search(q, 5));
            lexical.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let hits = index.search(q, MAX_LIMIT);
            std::hint::black_box(vectors.search(model, &hits, q, 5, &fusion));
            hybrid.push(t.elapsed().as_secs_f64() * 1e3);
        }
        lexical.sort_by(f64::total_cmp);
        hybrid.sort_by(f64::total_cmp);
        println!(
            "| {total} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.0} ms | {:.1} MB |",
            percentile(&lexical, 0.5),
            percentile(&lexical, 0.99),
            percentile(&hybrid, 0.5),
            percentile(&hybrid, 0.99),
            build.as_secs_f64() * 1e3,
            vectors.vector_bytes() as f64 / 1e6
        );
        println!("  (resident memory after building these vectors: {rss_vectors:.1} MB)");
    }
}
