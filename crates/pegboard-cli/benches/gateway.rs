//! `tools/call` latency and throughput through the gateway versus straight to the same backend.
//!
//! Both paths use the same rmcp client over stdio, in the same run: `direct` talks to the test
//! server (`pegboard demo-server test`), `gateway` talks to `pegboard serve`, which routes the call
//! to its own child running the same server. Target: gateway <= 1.2x the direct latency.
//!
//! `echo` does no work, so it shows the whole cost of the extra hop (one more stdio round trip);
//! `work_1ms` is a tool that takes a millisecond, closer to what real tools take.
//!
//! `tools_call_http` is the same client over streamable HTTP to `pegboard serve --http`, one
//! keep-alive connection: a per-call floor coming back (Nagle's ~40 ms without `TCP_NODELAY`)
//! shows there as milliseconds where a call takes ~0.1 ms.

use std::{process::Stdio, time::Duration};

use tokio::io::AsyncBufReadExt;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::{
    ServiceExt,
    model::CallToolRequestParams,
    transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess},
};

type Client = rmcp::service::RunningService<
    rmcp::RoleClient,
    Box<dyn rmcp::service::DynService<rmcp::RoleClient>>,
>;

const PEGBOARD: &str = env!("CARGO_BIN_EXE_pegboard");

async fn spawn(args: &[&str]) -> Client {
    let cmd = tokio::process::Command::new(PEGBOARD).configure(|c| {
        c.args(args).kill_on_drop(true);
    });
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn pegboard");
    tokio::time::timeout(Duration::from_secs(60), ().into_dyn().serve(transport))
        .await
        .expect("handshake in time")
        .expect("handshake")
}

/// `pegboard serve --http 127.0.0.1:0 --config CONFIG` (killed when dropped) and a client of it,
/// connected to the URL it prints.
async fn spawn_http(config: &str) -> (tokio::process::Child, Client) {
    let mut child = tokio::process::Command::new(PEGBOARD)
        .args(["serve", "--http", "127.0.0.1:0", "--config", config])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn pegboard serve --http");
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.expect("stderr line") {
            if let Some(url) = line
                .split(" at ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .filter(|url| url.starts_with("http://"))
            {
                return url.to_string();
            }
        }
        panic!("pegboard serve --http ended without saying where it serves");
    })
    .await
    .expect("serving in time");
    // Keep reading, so the gateway never blocks on a full stderr pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        ().into_dyn()
            .serve(StreamableHttpClientTransport::from_uri(url.as_str())),
    )
    .await
    .expect("handshake in time")
    .expect("handshake");
    (child, client)
}

fn calls(c: &mut Criterion) {
    // reqwest (rmcp's HTTP client) is built without a default crypto provider in this workspace.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir().join(format!("pegboard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = dir.join("pegboard.json");
    let body = serde_json::json!({"mcpServers": {"t": {"command": PEGBOARD, "args": ["demo-server", "test"]}}});
    std::fs::write(&config, body.to_string()).expect("write config");
    let config = config.to_string_lossy().into_owned();

    let (direct, gateway, (_http_child, http)) = rt.block_on(async {
        (
            spawn(&["demo-server", "test"]).await,
            spawn(&["serve", "-q", "--config", &config]).await,
            spawn_http(&config).await,
        )
    });
    let object = |value: serde_json::Value| value.as_object().cloned().expect("object");
    let echo = object(serde_json::json!({"text": "hello"}));
    // A tool that works for 1 ms, as a real one does: what the hop costs relative to real calls.
    let work = object(serde_json::json!({"ms": 1}));

    let groups = [
        (
            "tools_call_stdio",
            vec![
                ("echo/direct", &direct, "echo", &echo),
                ("echo/gateway", &gateway, "t-echo", &echo),
                ("work_1ms/direct", &direct, "sleep", &work),
                ("work_1ms/gateway", &gateway, "t-sleep", &work),
            ],
        ),
        (
            "tools_call_http",
            vec![
                ("echo/gateway", &http, "t-echo", &echo),
                ("work_1ms/gateway", &http, "t-sleep", &work),
            ],
        ),
    ];
    for (name, cases) in groups {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements(1));
        group.measurement_time(Duration::from_secs(10));
        for (label, client, tool, arguments) in cases {
            group.bench_function(label, |b| {
                b.to_async(&rt).iter(|| {
                    let params = CallToolRequestParams::new(tool).with_arguments(arguments.clone());
                    async move {
                        let result = client.call_tool(params).await.expect("call");
                        assert_ne!(result.is_error, Some(true));
                        result
                    }
                })
            });
        }
        group.finish();
    }
    rt.block_on(async {
        let _ = direct.cancel().await;
        let _ = gateway.cancel().await;
        let _ = http.cancel().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, calls);
criterion_main!(benches);
