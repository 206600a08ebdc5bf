//! What `run_code` costs on its own, without a gateway: the engine's start (a fresh runtime and
//! context, the prelude, a script that returns at once) and the overhead of one tool call from a
//! script (a host that answers at once), one after another and with `Promise.all`.
//!
//! `cargo bench -p pegboard-codemode --bench run_code`

use criterion::{Criterion, criterion_group, criterion_main};
use pegboard_codemode::{CallFuture, Limits, ToolEntry, ToolHost, ToolReply, run};
use serde_json::{Value, json};

/// A host of `tools` tools (`ns-t0`, `ns-t1`, ...) that answer `{"ok": true}` at once.
struct Instant {
    tools: usize,
}

impl ToolHost for Instant {
    fn tools(&self) -> Vec<ToolEntry> {
        (0..self.tools)
            .map(|i| ToolEntry {
                name: format!("ns-t{i}"),
                namespace: Some("ns".into()),
                original: format!("t{i}"),
            })
            .collect()
    }

    fn call<'a>(&'a self, _name: &'a str, _arguments: Value) -> CallFuture<'a> {
        Box::pin(async { ToolReply::Value(json!({"ok": true})) })
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let limits = Limits::default();
    let mut group = c.benchmark_group("run_code");
    for tools in [1, 100] {
        let host = Instant { tools };
        group.bench_function(format!("start, return 1 ({tools} tools)"), |b| {
            b.to_async(&runtime).iter(|| async {
                let outcome = run("return 1", &host, &limits).await;
                assert_eq!(outcome.result.as_deref(), Ok("1"));
            });
        });
    }
    let host = Instant { tools: 1 };
    group.bench_function("100 calls one after another", |b| {
        b.to_async(&runtime).iter(|| async {
            let outcome = run(
                "let n = 0; for (let i = 0; i < 100; i++) if ((await tools.ns.t0({i})).ok) n++; return n",
                &host,
                &limits,
            )
            .await;
            assert_eq!(outcome.result.as_deref(), Ok("100"));
        });
    });
    group.bench_function("100 calls with Promise.all", |b| {
        b.to_async(&runtime).iter(|| async {
            let outcome = run(
                "const r = await Promise.all([...Array(100).keys()].map(i => tools.ns.t0({i}))); return r.length",
                &host,
                &limits,
            )
            .await;
            assert_eq!(outcome.result.as_deref(), Ok("100"));
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
