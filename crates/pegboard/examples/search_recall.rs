//! Recall of tool search on the Berkeley Function Calling Leaderboard's tools.
//!
//! `cargo run --release -p pegboard --example search_recall`
//!
//! 1,853 tools and 2,501 requests derived from the `bfcl-eval` package (Apache-2.0; see
//! `benches/data/bfcl/README.md`). Each request names the tool(s) its answer calls. For plain BM25
//! over name and description (the baseline, written here independently of the library) and for
//! each step of the library's ranking, prints recall@1, recall@5 and MRR; then checks that every
//! tool's exact name finds it first, and exits non-zero if one does not.

use std::{collections::HashMap, path::PathBuf, sync::Arc, time::Instant};

use pegboard::{
    Tool,
    search::{FieldWeights, SearchConfig, SearchIndex, ToolDoc},
};
use serde_json::Value;

struct Query {
    text: String,
    relevant: Vec<String>,
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data/bfcl")
}

fn read_jsonl(name: &str) -> Vec<Value> {
    let path = data_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

fn load() -> (Vec<Tool>, Vec<Query>) {
    let tools = read_jsonl("tools.jsonl")
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
    let queries = read_jsonl("queries.jsonl")
        .into_iter()
        .map(|q| Query {
            text: q["query"].as_str().expect("query").to_string(),
            relevant: q["relevant"]
                .as_array()
                .expect("relevant")
                .iter()
                .map(|r| r.as_str().expect("name").to_string())
                .collect(),
        })
        .collect();
    (tools, queries)
}

/// Plain BM25 (k1 = 1.2, b = 0.75) over `name + " " + description`, words split at
/// non-alphanumeric characters and lowercased: no camelCase split, no stemming, no fields.
struct Baseline {
    names: Vec<String>,
    lens: Vec<f32>,
    avg_len: f32,
    postings: HashMap<String, Vec<(usize, f32)>>,
}

fn plain_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Baseline {
    fn new(tools: &[Tool]) -> Self {
        let mut postings: HashMap<String, Vec<(usize, f32)>> = HashMap::new();
        let mut lens = Vec::new();
        for (doc, tool) in tools.iter().enumerate() {
            let text = format!("{} {}", tool.name(), tool.description().unwrap_or_default());
            let mut tf: HashMap<String, f32> = HashMap::new();
            let mut len = 0.0;
            for word in plain_words(&text) {
                *tf.entry(word).or_default() += 1.0;
                len += 1.0;
            }
            for (word, n) in tf {
                postings.entry(word).or_default().push((doc, n));
            }
            lens.push(len);
        }
        let avg_len = lens.iter().sum::<f32>() / lens.len() as f32;
        Self {
            names: tools.iter().map(|t| t.name().to_string()).collect(),
            lens,
            avg_len,
            postings,
        }
    }

    fn search(&self, query: &str, limit: usize) -> Vec<String> {
        let n = self.names.len() as f32;
        let mut scores = vec![0.0f32; self.names.len()];
        let mut words: Vec<String> = plain_words(query).collect();
        words.sort();
        words.dedup();
        for word in words {
            let Some(list) = self.postings.get(&word) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let norm = 1.2 * (0.25 + 0.75 * self.lens[doc] / self.avg_len);
                scores[doc] += idf * tf * 2.2 / (tf + norm);
            }
        }
        let mut ranked: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|s| s.1 > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        ranked
            .into_iter()
            .map(|(d, _)| self.names[d].clone())
            .collect()
    }
}

#[derive(Default)]
struct Metrics {
    recall_1: f64,
    recall_5: f64,
    mrr: f64,
    queries: usize,
    micros: f64,
}

impl Metrics {
    fn add(&mut self, ranked: &[String], relevant: &[String]) {
        let found_in = |k: usize| {
            relevant
                .iter()
                .filter(|r| ranked.iter().take(k).any(|n| n == *r))
                .count() as f64
                / relevant.len() as f64
        };
        self.recall_1 += found_in(1);
        self.recall_5 += found_in(5);
        if let Some(rank) = ranked.iter().position(|n| relevant.contains(n)) {
            self.mrr += 1.0 / (rank + 1) as f64;
        }
        self.queries += 1;
    }

    fn row(&self, name: &str) -> String {
        let q = self.queries as f64;
        format!(
            "| {name:<44} | {:>6.1}% | {:>6.1}% | {:>6.3} | {:>8.1} |",
            100.0 * self.recall_1 / q,
            100.0 * self.recall_5 / q,
            self.mrr / q,
            self.micros / q
        )
    }
}

fn evaluate(queries: &[Query], mut search: impl FnMut(&str) -> Vec<String>) -> Metrics {
    let mut metrics = Metrics::default();
    let start = Instant::now();
    let ranked: Vec<Vec<String>> = queries.iter().map(|q| search(&q.text)).collect();
    metrics.micros = start.elapsed().as_secs_f64() * 1e6;
    for (q, r) in queries.iter().zip(&ranked) {
        metrics.add(r, &q.relevant);
    }
    metrics
}

fn index(tools: &[Tool], config: SearchConfig) -> SearchIndex {
    let docs = tools
        .iter()
        .map(|t| ToolDoc::new(t.clone(), t.name(), None));
    SearchIndex::with_config(config).with_service(0, docs)
}

fn main() {
    let (tools, queries) = load();
    println!("BFCL: {} tools, {} queries\n", tools.len(), queries.len());
    println!(
        "| {:<44} | {:>7} | {:>7} | {:>6} | {:>8} |",
        "ranking", "R@1", "R@5", "MRR", "us/query"
    );
    println!(
        "|{}|---------|---------|--------|----------|",
        "-".repeat(46)
    );

    let baseline = Baseline::new(&tools);
    let m = evaluate(&queries, |q| baseline.search(q, 100));
    println!("{}", m.row("baseline: BM25, name + description"));

    let name_and_description = FieldWeights {
        name: 1.0,
        title: 0.0,
        description: 1.0,
        namespace: 0.0,
        parameters: 0.0,
        parameter_descriptions: 0.0,
    };
    let plain = SearchConfig {
        weights: name_and_description,
        stemming: false,
        word_forms: false,
        feedback: false,
        ..SearchConfig::default()
    };
    let steps: Vec<(&str, SearchConfig)> = vec![
        ("1 + name words split (camel/snake/dotted)", plain.clone()),
        (
            "2 + stemming, stop words",
            SearchConfig {
                stemming: true,
                ..plain.clone()
            },
        ),
        (
            "3 + BM25F fields (title, ns, params) weighted",
            SearchConfig {
                word_forms: false,
                feedback: false,
                ..SearchConfig::default()
            },
        ),
        (
            "4 + word forms (5-letter prefixes) = default",
            SearchConfig::default(),
        ),
        (
            "5 + pseudo-relevance feedback, weight 0.3",
            SearchConfig {
                feedback: true,
                ..SearchConfig::default()
            },
        ),
        (
            "5' + pseudo-relevance feedback, weight 0.1",
            SearchConfig {
                feedback: true,
                feedback_weight: 0.1,
                ..SearchConfig::default()
            },
        ),
    ];
    let mut default_index = None;
    for (name, config) in steps {
        let is_default = config == SearchConfig::default();
        let index = index(&tools, config);
        let m = evaluate(&queries, |q| {
            index
                .search(q, 100)
                .into_iter()
                .map(|m| m.tool.name().to_string())
                .collect()
        });
        println!("{}", m.row(name));
        if is_default {
            default_index = Some(index);
        }
    }

    drop(default_index);
    // Exact names on a board of 20 namespaces: board name, original name, and the board name in
    // capitals where no other tool has the same name ignoring case.
    let mut services: Vec<Vec<ToolDoc>> = vec![Vec::new(); 20];
    for (i, tool) in tools.iter().enumerate() {
        let ns = format!("ns{}", i % 20);
        let board_name = format!("{ns}-{}", tool.name());
        services[i % 20].push(ToolDoc::new(
            tool.renamed(board_name),
            tool.name(),
            Some(ns.into()),
        ));
    }
    let index = services
        .into_iter()
        .enumerate()
        .fold(SearchIndex::new(), |index, (key, docs)| {
            index.with_service(key, docs)
        });
    let mut lowercase: HashMap<String, usize> = HashMap::new();
    for tool in &tools {
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
            let found = index.search(&query, 5);
            if found.first().map(|m| m.tool.name()) != Some(board_name.as_str()) {
                missed.push(query);
            }
        }
    }
    println!(
        "\nexact-name queries (board, original, capitalised board name): {} of {asked} found first",
        asked - missed.len()
    );
    if !missed.is_empty() {
        eprintln!("not first: {missed:?}");
        std::process::exit(1);
    }
}
