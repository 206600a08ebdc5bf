//! The recall evaluation shared by `tests/recall.rs` (floors) and `examples/hybrid_recall.rs`
//! (the full table): data sets, splits, rankers, metrics.

#![allow(dead_code)]

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, OnceLock},
};

use pegboard::{
    Tool,
    search::{MAX_LIMIT, SearchIndex, ToolDoc},
};
use pegboard_embed::{
    StaticModel, dot,
    hybrid::{Expansion, Fusion, ToolVectors},
};
use serde_json::Value;

pub struct Query {
    pub id: String,
    pub text: String,
    pub relevant: Vec<String>,
}

pub struct DataSet {
    pub tools: Vec<Tool>,
    pub queries: Vec<Query>,
}

fn read_jsonl(path: PathBuf) -> Vec<Value> {
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

fn load(dir: PathBuf) -> DataSet {
    let tools = read_jsonl(dir.join("tools.jsonl"))
        .into_iter()
        .map(|t| {
            let schema = t["inputSchema"].as_object().cloned().unwrap_or_default();
            Tool::new(
                t["name"].as_str().expect("name").to_string(),
                t["description"].as_str().unwrap_or_default().to_string(),
                Arc::new(schema),
            )
        })
        .collect();
    let queries = read_jsonl(dir.join("queries.jsonl"))
        .into_iter()
        .map(|q| Query {
            id: q["id"].as_str().expect("id").to_string(),
            text: q["query"].as_str().expect("query").to_string(),
            relevant: q["relevant"]
                .as_array()
                .expect("relevant")
                .iter()
                .map(|r| r.as_str().expect("name").to_string())
                .collect(),
        })
        .collect();
    DataSet { tools, queries }
}

/// The model evaluated: the built-in one, or, to compare candidate tables without rebuilding,
/// the `vocab.txt` and `vectors.bin` in the directory `PEGBOARD_EMBED_DIR` names.
pub fn model() -> &'static StaticModel {
    static MODEL: OnceLock<&'static StaticModel> = OnceLock::new();
    MODEL.get_or_init(|| match std::env::var_os("PEGBOARD_EMBED_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let vocab = std::fs::read_to_string(dir.join("vocab.txt")).expect("vocab.txt");
            let vectors: &'static [u8] =
                Vec::leak(std::fs::read(dir.join("vectors.bin")).expect("vectors.bin"));
            eprintln!("model from {}", dir.display());
            Box::leak(Box::new(
                StaticModel::from_parts(&vocab, vectors).expect("a valid table"),
            ))
        }
        None => StaticModel::builtin().expect("built-in model"),
    })
}

/// BFCL (the `search_recall` example's data): 1,853 tools, 2,501 requests.
pub fn bfcl() -> DataSet {
    load(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pegboard/benches/data/bfcl"))
}

/// MetaTool (MIT): 199 tools, 1,031 requests; never tuned on.
pub fn metatool() -> DataSet {
    load(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/metatool"))
}

/// The BFCL half a request falls in, by a hash of its id: `true` is the tuning half (the
/// fusion and expansion were chosen on it), `false` the held-out half (reported, never tuned on).
pub fn is_tuning(id: &str) -> bool {
    // FNV-1a: fixed, so the split never changes.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.is_multiple_of(2)
}

/// Per request: hit@k counts it when a tool it needs is among the first k (the issue's
/// definition of recall@1/@5); recall@k is the share of its needed tools among the first k
/// (lower for BFCL's requests that need several tools; the figures before hit@k was added).
#[derive(Default, Clone, Copy)]
pub struct Metrics {
    pub hit_1: f64,
    pub hit_5: f64,
    pub recall_1: f64,
    pub recall_5: f64,
    pub mrr: f64,
    pub queries: usize,
}

impl Metrics {
    pub fn add(&mut self, ranked: &[String], relevant: &[String]) {
        let found_in = |k: usize| {
            relevant
                .iter()
                .filter(|r| ranked.iter().take(k).any(|n| n == *r))
                .count() as f64
        };
        let share = |k: usize| found_in(k) / relevant.len().max(1) as f64;
        let hit = |k: usize| if found_in(k) > 0.0 { 1.0 } else { 0.0 };
        self.hit_1 += hit(1);
        self.hit_5 += hit(5);
        self.recall_1 += share(1);
        self.recall_5 += share(5);
        if let Some(rank) = ranked.iter().position(|n| relevant.contains(n)) {
            self.mrr += 1.0 / (rank + 1) as f64;
        }
        self.queries += 1;
    }

    fn mean(&self, sum: f64) -> f64 {
        sum / self.queries.max(1) as f64
    }
    pub fn h1(&self) -> f64 {
        self.mean(self.hit_1)
    }
    pub fn h5(&self) -> f64 {
        self.mean(self.hit_5)
    }
    pub fn r1(&self) -> f64 {
        self.mean(self.recall_1)
    }
    pub fn r5(&self) -> f64 {
        self.mean(self.recall_5)
    }
    pub fn mrr(&self) -> f64 {
        self.mean(self.mrr)
    }

    pub fn row(&self, name: &str) -> String {
        format!(
            "| {name:<46} | {:>6.1}% | {:>6.1}% | {:>6.1}% | {:>6.1}% | {:>6.3} |",
            100.0 * self.h1(),
            100.0 * self.h5(),
            100.0 * self.r1(),
            100.0 * self.r5(),
            self.mrr()
        )
    }
}

/// How a board ranks: lexical only, embedding only, or fused.
#[derive(Clone, Debug)]
pub enum Ranking {
    Lexical,
    Embedding,
    Hybrid(Fusion),
}

/// A board of the data set's tools: one service, no namespace (as the `search_recall` example).
pub struct Board {
    pub lexical: SearchIndex,
    pub vectors: ToolVectors,
}

pub fn board(tools: &[Tool], expansion: &Expansion) -> Board {
    let docs: Vec<ToolDoc> = tools
        .iter()
        .map(|t| ToolDoc::new(t.clone(), t.name(), None))
        .collect();
    let lexical = SearchIndex::new().with_service(0, docs.clone());
    let model = model();
    let vectors = ToolVectors::build(model, docs.into_iter().map(|d| (d, None)), None, expansion);
    Board { lexical, vectors }
}

impl Board {
    pub fn search(&self, ranking: &Ranking, query: &str, limit: usize) -> Vec<String> {
        let model = model();
        let lexical = self.lexical.search(query, MAX_LIMIT);
        match ranking {
            Ranking::Lexical => lexical
                .into_iter()
                .take(limit)
                .map(|m| m.tool.name().to_string())
                .collect(),
            // Weight 0 on the lexical side: exact names first, then by cosine alone.
            Ranking::Embedding => self
                .vectors
                .search(
                    model,
                    &lexical,
                    query,
                    limit,
                    &Fusion::Weighted { lexical: 0.0 },
                )
                .into_iter()
                .map(|f| f.doc.tool.name().to_string())
                .collect(),
            Ranking::Hybrid(fusion) => self
                .vectors
                .search(model, &lexical, query, limit, fusion)
                .into_iter()
                .map(|f| f.doc.tool.name().to_string())
                .collect(),
        }
    }
}

pub fn evaluate<'a>(
    board: &Board,
    ranking: &Ranking,
    queries: impl IntoIterator<Item = &'a Query>,
) -> Metrics {
    let mut m = Metrics::default();
    for q in queries {
        m.add(&board.search(ranking, &q.text, 10), &q.relevant);
    }
    m
}

/// Exact names on a board of 20 namespaces: the board name, the original name, and the board
/// name in capitals where no other tool has the same name ignoring case; each must come first.
/// Returns (asked, missed).
pub fn exact_names(tools: &[Tool], ranking: &Ranking) -> (usize, Vec<String>) {
    let mut services: Vec<Vec<ToolDoc>> = vec![Vec::new(); 20];
    for (i, tool) in tools.iter().enumerate() {
        let ns = format!("ns{}", i % 20);
        services[i % 20].push(ToolDoc::new(
            tool.renamed(format!("{ns}-{}", tool.name())),
            tool.name(),
            Some(ns.into()),
        ));
    }
    let lexical = services
        .iter()
        .enumerate()
        .fold(SearchIndex::new(), |index, (key, docs)| {
            index.with_service(key, docs.clone())
        });
    let model = model();
    let vectors = ToolVectors::build(
        model,
        services.into_iter().flatten().map(|d| (d, None)),
        None,
        &Expansion::default(),
    );
    let board = Board { lexical, vectors };
    let mut lowercase: HashMap<String, usize> = HashMap::new();
    for tool in tools {
        *lowercase.entry(tool.name().to_lowercase()).or_default() += 1;
    }
    let mut missed = Vec::new();
    let mut asked = 0;
    for (i, tool) in tools.iter().enumerate() {
        let board_name = format!("ns{}-{}", i % 20, tool.name());
        let mut variants = vec![board_name.clone(), tool.name().to_string()];
        if lowercase[&tool.name().to_lowercase()] == 1 {
            variants.push(board_name.to_uppercase());
        }
        for query in variants {
            asked += 1;
            let found = board.search(ranking, &query, 5);
            if found.first() != Some(&board_name) {
                missed.push(query);
            }
        }
    }
    (asked, missed)
}

/// Cosine of two texts under the built-in model.
pub fn cosine(a: &str, b: &str) -> f32 {
    let model = model();
    dot(&model.embed(a), &model.embed(b))
}
