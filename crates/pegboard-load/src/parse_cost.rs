//! `pegboard-load parse-cost`: what one `tools/call` costs in JSON alone, on the messages the
//! gateway handles: rmcp's generic parse (what its transports do for every line) against a
//! parse that knows the message's shape, and the re-serialisation.

use std::hint::black_box;
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{RoleClient, RoleServer};
use serde::Deserialize;
use serde::de::IgnoredAny;

/// The request as a client sends it (the harness's own bytes).
const REQUEST: &[u8] = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"b-convert","arguments":{"value":10,"from":"km","to":"mi"}},"id":17}"#;
/// The units server's answer, as it writes it.
const RESPONSE: &[u8] = br#"{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"10 km = 6.213712 mi"}],"isError":false}}"#;

#[derive(Deserialize)]
struct KnownRequest {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: IgnoredAny,
    #[serde(rename = "id")]
    _id: u64,
    #[serde(rename = "method")]
    _method: IgnoredAny,
    #[serde(rename = "params")]
    _params: CallToolRequestParams,
}

#[derive(Deserialize)]
struct KnownResponse {
    #[serde(rename = "id")]
    _id: u64,
    #[serde(rename = "result")]
    _result: CallToolResult,
}

#[derive(Deserialize)]
struct Skimmed {
    #[serde(rename = "id")]
    _id: u64,
    #[serde(rename = "result")]
    _result: IgnoredAny,
}

/// Median ns per call of `f`, over 7 batches.
fn time(f: impl FnMut()) -> f64 {
    median_ns(20_000, 5_000, f)
}

/// Median ns per call of `f`, over 7 batches of 50 (for work of hundreds of µs).
fn time_few(f: impl FnMut()) -> f64 {
    median_ns(50, 1, f)
}

/// Median ns per call of `f` over 7 batches of `per_batch` calls, after `warmup` calls.
fn median_ns(per_batch: u32, warmup: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..warmup {
        f();
    }
    let mut batches: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..per_batch {
                f();
            }
            start.elapsed().as_secs_f64() * 1e9 / f64::from(per_batch)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

/// Print the table.
pub fn run() -> anyhow::Result<()> {
    // Fail loudly if rmcp no longer accepts the samples: the numbers would mean nothing.
    let request: RxJsonRpcMessage<RoleServer> = serde_json::from_slice(REQUEST)?;
    let response: RxJsonRpcMessage<RoleClient> = serde_json::from_slice(RESPONSE)?;
    serde_json::from_slice::<KnownRequest>(REQUEST)?;
    serde_json::from_slice::<KnownResponse>(RESPONSE)?;
    let outgoing: TxJsonRpcMessage<RoleClient> = match &request {
        rmcp::model::JsonRpcMessage::Request(r) => {
            rmcp::model::JsonRpcMessage::request(r.request.clone(), r.id.clone())
        }
        _ => anyhow::bail!("the sample request did not parse as a request"),
    };
    let answer: TxJsonRpcMessage<RoleServer> = match &response {
        rmcp::model::JsonRpcMessage::Response(r) => {
            rmcp::model::JsonRpcMessage::response(r.result.clone(), r.id.clone())
        }
        _ => anyhow::bail!("the sample response did not parse as a response"),
    };
    let rows = [
        (
            "rmcp parse: tools/call request (server side)",
            time(|| {
                black_box(
                    serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(black_box(REQUEST)).ok(),
                );
            }),
        ),
        (
            "shape-known parse of the same request",
            time(|| {
                black_box(serde_json::from_slice::<KnownRequest>(black_box(REQUEST)).ok());
            }),
        ),
        (
            "rmcp parse: CallToolResult response (client side)",
            time(|| {
                black_box(
                    serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(black_box(RESPONSE))
                        .ok(),
                );
            }),
        ),
        (
            "shape-known parse of the same response",
            time(|| {
                black_box(serde_json::from_slice::<KnownResponse>(black_box(RESPONSE)).ok());
            }),
        ),
        (
            "skim the response (id only, result skipped)",
            time(|| {
                black_box(serde_json::from_slice::<Skimmed>(black_box(RESPONSE)).ok());
            }),
        ),
        (
            "rmcp serialise: the request sent upstream",
            time(|| {
                black_box(serde_json::to_vec(black_box(&outgoing)).ok());
            }),
        ),
        (
            "rmcp serialise: the response sent downstream",
            time(|| {
                black_box(serde_json::to_vec(black_box(&answer)).ok());
            }),
        ),
    ];
    println!("| JSON work per tools/call message | ns |\n|---|--:|");
    for (what, ns) in rows {
        println!("| {what} | {ns:.0} |");
    }
    // What the harness itself spends on each `tools/list` answer of the 1,000-tool rows: its
    // own read of the message (`rpc::probe`), after the clock stops (latency is send to the
    // answer's last byte), so in no row's p50.
    let list = crate::backend::tools_list_answer(1_000)?;
    crate::rpc::probe(&list)?;
    let ns = time_few(|| {
        black_box(crate::rpc::probe(black_box(&list)).ok());
    });
    println!(
        "| the harness's read of a tools/list answer of 1,000 tools ({} KB) | {ns:.0} |",
        list.len() / 1000
    );
    Ok(())
}
