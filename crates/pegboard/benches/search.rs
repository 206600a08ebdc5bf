//! Tool search at board scale: 10,000 tools in 100 services of 100 (BFCL's tools, repeated
//! under different namespaces), and the same in one service.
//!
//! Targets: `search` on 10,000 tools <= 1 ms median on one core; replacing or adding one
//! 100-tool service on a 10,000-tool index <= 5 ms. Before the timings, prints the index's
//! memory: bytes allocated and kept by building it, counted by an instrumented global allocator
//! (the tools themselves are shared with the board and not counted).

use std::{alloc::System, hint::black_box, path::PathBuf, sync::Arc};

use criterion::{BatchSize, Criterion};
use pegboard::{
    Tool,
    search::{SearchConfig, SearchIndex, ToolDoc},
};
use serde_json::Value;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const SERVICES: usize = 100;
const TOOLS_PER_SERVICE: usize = 100;

fn read_jsonl(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("benches/data/bfcl")
        .join(name);
    std::fs::read_to_string(&path)
        .expect("BFCL data next to the bench")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// 100 services of 100 tools, each a BFCL tool under the service's namespace.
fn services() -> Vec<Vec<ToolDoc>> {
    let tools = read_jsonl("tools.jsonl");
    (0..SERVICES)
        .map(|s| {
            let namespace: Arc<str> = format!("svc{s}").into();
            (0..TOOLS_PER_SERVICE)
                .map(|i| {
                    let t = &tools[(s * TOOLS_PER_SERVICE + i * 7) % tools.len()];
                    let original: Arc<str> = t["name"].as_str().expect("name").into();
                    let schema = t["inputSchema"].as_object().cloned().unwrap_or_default();
                    let tool = Tool::new(
                        format!("{namespace}-{original}"),
                        t["description"].as_str().unwrap_or_default().to_string(),
                        Arc::new(schema),
                    );
                    ToolDoc::new(tool, original, Some(Arc::clone(&namespace)))
                })
                .collect()
        })
        .collect()
}

fn queries() -> Vec<String> {
    read_jsonl("queries.jsonl")
        .iter()
        .step_by(25)
        .map(|q| q["query"].as_str().expect("query").to_string())
        .collect()
}

fn build(services: &[Vec<ToolDoc>], config: &SearchConfig) -> SearchIndex {
    services.iter().enumerate().fold(
        SearchIndex::with_config(config.clone()),
        |index, (key, docs)| index.with_service(key, docs.clone()),
    )
}

fn report_memory(services: &[Vec<ToolDoc>]) {
    let tools = (SERVICES * TOOLS_PER_SERVICE) as f64;
    for (name, config) in [
        ("default", SearchConfig::default()),
        (
            "without word forms",
            SearchConfig {
                word_forms: false,
                ..SearchConfig::default()
            },
        ),
    ] {
        let region = Region::new(GLOBAL);
        let index = build(services, &config);
        let change = region.change();
        let kept = change.bytes_allocated as f64 - change.bytes_deallocated as f64
            + change.bytes_reallocated as f64;
        println!(
            "memory/{name}: {} tools, {:.0} bytes kept ({:.0} per tool), {:.0} bytes allocated while building",
            index.len(),
            kept,
            kept / tools,
            change.bytes_allocated as f64,
        );
        drop(index);
    }
}

fn bench(c: &mut Criterion) {
    let services = services();
    report_memory(&services);
    let queries = queries();
    let config = SearchConfig::default();
    let index = build(&services, &config);
    assert_eq!(index.len(), SERVICES * TOOLS_PER_SERVICE);

    let mut q = 0;
    c.bench_function("search/10k_tools_100_services", |b| {
        b.iter(|| {
            q = (q + 1) % queries.len();
            black_box(index.search(black_box(&queries[q]), 5))
        })
    });
    let one_service: Vec<ToolDoc> = services.iter().flatten().cloned().collect();
    let single = SearchIndex::new().with_service(0, one_service);
    c.bench_function("search/10k_tools_1_service", |b| {
        b.iter(|| {
            q = (q + 1) % queries.len();
            black_box(single.search(black_box(&queries[q]), 5))
        })
    });
    c.bench_function("search/10k_tools_exact_name", |b| {
        b.iter(|| black_box(index.search(black_box("svc42-calculate_triangle_area"), 5)))
    });
    let feedback = build(
        &services,
        &SearchConfig {
            feedback: true,
            ..config.clone()
        },
    );
    c.bench_function("search/10k_tools_with_feedback", |b| {
        b.iter(|| {
            q = (q + 1) % queries.len();
            black_box(feedback.search(black_box(&queries[q]), 5))
        })
    });

    let without_last = index.without_service(SERVICES - 1);
    let last = &services[SERVICES - 1];
    c.bench_function("update/add_100_tool_service_to_9900", |b| {
        b.iter_batched(
            || last.clone(),
            |docs| black_box(without_last.with_service(SERVICES - 1, docs)),
            BatchSize::SmallInput,
        )
    });
    c.bench_function("update/replace_100_tool_service_of_10k", |b| {
        b.iter_batched(
            || last.clone(),
            |docs| black_box(index.with_service(SERVICES - 1, docs)),
            BatchSize::SmallInput,
        )
    });
    // What the board does on its first search after `add_service` of a 100-tool server: every
    // service's tools are handed over again, 99 segments are reused by pointer compare, one built.
    let all: Vec<(usize, Vec<ToolDoc>)> = services.iter().cloned().enumerate().collect();
    c.bench_function(
        "update/board_rebuild_after_add_100_tool_service_to_9900",
        |b| {
            b.iter_batched(
                || all.clone(),
                |all| black_box(without_last.rebuilt(all)),
                BatchSize::SmallInput,
            )
        },
    );
    c.bench_function("update/remove_service_of_10k", |b| {
        b.iter(|| black_box(index.without_service(black_box(7))))
    });
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}
