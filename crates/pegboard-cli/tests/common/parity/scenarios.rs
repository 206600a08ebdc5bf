//! The parity scenarios, written once for both fronts: each runs the same calls on the two
//! gateways of a front (express and `--no-express`), every tool called twice (the first call of
//! a tool goes rmcp's way on the express gateway, the second must take the lane: its log says
//! so), and fails unless the client saw the same thing on every path. What only HTTP has (a
//! dropped connection, `DELETE` of the session) is in [`super::connection`].

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use super::{Exchange, Front, Gateway, paths};

/// A path and call, for messages: `Express, call 2`.
pub fn label(gateway: &Gateway, n: usize) -> String {
    format!("{:?} over {:?}, call {n}", gateway.way, gateway.front)
}

/// Fail unless every observation equals the first; the message lists every one that differs.
pub fn all_same(what: &str, seen: &[(String, Value)]) -> Result<()> {
    let Some((first_label, first)) = seen.first() else {
        bail!("{what}: nothing seen");
    };
    let differ: Vec<String> = seen[1..]
        .iter()
        .filter(|(_, value)| value != first)
        .map(|(label, value)| format!("  {label}: {value}"))
        .collect();
    ensure!(
        differ.is_empty(),
        "{what}: the paths differ\n  {first_label}: {first}\n{}",
        differ.join("\n")
    );
    Ok(())
}

/// What a scenario found wrong, reported all at once (every path's, not only the first's).
#[derive(Default)]
pub struct Problems(Vec<String>);

impl Problems {
    /// Note `problem` unless `ok`.
    pub fn check(&mut self, ok: bool, problem: impl FnOnce() -> String) {
        if !ok {
            self.0.push(problem());
        }
    }

    /// Note a failed comparison.
    pub fn same(&mut self, what: &str, seen: &[(String, Value)]) {
        if let Err(e) = all_same(what, seen) {
            self.0.push(e.to_string());
        }
    }

    /// Fail with every problem noted.
    pub fn done(self) -> Result<()> {
        ensure!(self.0.is_empty(), "{}", self.0.join("\n"));
        Ok(())
    }
}

/// Call `params` twice on `gateway`: the first call however it goes, the second on the lane
/// (on the express gateway).
pub async fn twice(gateway: &mut Gateway, params: &Value) -> Result<[Exchange; 2]> {
    let first = gateway.call(params.clone()).await?;
    let second = gateway.call_on_lane(params.clone()).await?;
    Ok([first, second])
}

/// Progress: every notification arrives, in order, increasing, under the client's own token
/// (a string, then a number), before the answer; and the answer is the same.
pub async fn progress(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    let mut seen = Vec::new();
    let want: Vec<Value> = (1..=4).map(|i| json!([f64::from(i), 4.0])).collect();
    for gateway in &mut paths.all {
        for (n, token) in [(1, json!("parity-progress")), (2, json!(7))] {
            let params = json!({"name": "everything-trigger-long-running-operation",
                "arguments": {"duration": 0.2, "steps": 4},
                "_meta": {"progressToken": token}});
            let call = match n {
                1 => gateway.call(params).await?,
                _ => gateway.call_on_lane(params).await?,
            };
            let label = label(gateway, n);
            let progress = call.progress();
            problems.check(progress.iter().all(|p| p["progressToken"] == token), || {
                format!("{label}: progress under another token than {token}: {progress:?}")
            });
            let steps: Vec<Value> = progress
                .iter()
                .map(|p| json!([p["progress"].as_f64(), p["total"].as_f64()]))
                .collect();
            problems.check(steps == want, || {
                format!("{label}: progress before the answer {steps:?}, not {want:?}")
            });
            problems.check(call.result()["content"].is_array(), || {
                format!("{label}: no result: {:?}", call.answer)
            });
            seen.push((
                label,
                json!({"progress": steps, "answer": call.outcome(), "kind": call.kind}),
            ));
        }
    }
    problems.same("progress", &seen);
    problems.done()
}

/// Cancellation by the client: `notifications/cancelled` reaches the server (it says "sleep
/// cancelled by the client") and the call gets no answer; over HTTP its response ends the same
/// way on every path.
pub async fn cancel(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    let mut seen = Vec::new();
    for gateway in &mut paths.all {
        // The tool's first call learns it answers plainly; the cancelled one takes the lane.
        gateway
            .call(json!({"name": "t-sleep", "arguments": {"ms": 1}}))
            .await?;
        let started = gateway.logged("sleep started");
        let cancelled = gateway.logged("sleep cancelled by the client");
        let lane = gateway.lane_calls();
        let sleep = json!({"name": "t-sleep", "arguments": {"ms": 60_000}});
        let (id, pending) = gateway.start_call(sleep.clone()).await?;
        gateway.wait_logged("sleep started", started + 1).await?;
        gateway.took_the_lane(lane, &sleep).await?;
        let notified = gateway
            .notify(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "parity: no longer needed"}}),
            )
            .await?;
        let label = label(gateway, 2);
        gateway
            .wait_logged("sleep cancelled by the client", cancelled + 1)
            .await
            .with_context(|| format!("{label}: the server never heard the cancel"))?;
        let ended = gateway.ended_without_answer(pending).await?;
        problems.check(ended.answer.is_none(), || {
            format!("{label}: a cancelled call was answered: {:?}", ended.answer)
        });
        seen.push((
            label,
            json!({"cancel": notified, "status": ended.status, "kind": ended.kind,
                "events": ended.before.len()}),
        ));
    }
    problems.same("cancellation", &seen);
    problems.done()
}

/// The server's requests during a call (sampling, form elicitation) reach the client on the
/// call's own stream — over HTTP this client opens no GET stream, so a request sent anywhere
/// else never reaches it and the call does not end — and its answers reach the server: the
/// same requests and the same results on every path. Roots are asked of the client once, when
/// its session starts; during a call the gateway answers the server with them, on every path.
/// Over HTTP the client's roots never reach the gateway (it asks for them on the standalone GET
/// stream, which this client does not open), so the server gets none — the same on every path.
/// (A request's `_meta` is compared by [`server_request_meta`]; a plain call's response kind
/// differs by design: the lane answers one JSON body, rmcp's way an event stream.)
pub async fn server_requests(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    let root = super::client_roots()[0]["uri"].clone();
    let root = match front {
        Front::Stdio => root.as_str().unwrap_or_default(),
        // What the answers say when the server got no roots (see above).
        Front::Http => "",
    };
    // The tool, its arguments, what the client is asked during the call, and what the
    // answer must say.
    let asks = [
        (
            "everything-trigger-sampling-request",
            json!({"prompt": "parity", "maxTokens": 20}),
            Some("sampling/createMessage"),
            "sampled by the parity client",
        ),
        (
            "everything-trigger-elicitation-request",
            json!({}),
            Some("elicitation/create"),
            "Ada Lovelace",
        ),
        ("everything-get-roots-list", json!({}), None, root),
        (
            "t-ask",
            json!({"via": "sampling", "question": "parity?"}),
            Some("sampling/createMessage"),
            "sampled by the parity client",
        ),
        (
            "t-ask",
            json!({"via": "elicitation"}),
            Some("elicitation/create"),
            "Ada Lovelace",
        ),
        ("t-ask", json!({"via": "roots"}), None, root),
    ];
    for (tool, arguments, asked, says) in asks {
        let mut seen = Vec::new();
        let params = json!({"name": tool, "arguments": arguments});
        for gateway in &mut paths.all {
            for (n, call) in twice(gateway, &params).await?.into_iter().enumerate() {
                let label = label(gateway, n + 1);
                let requests: Vec<Value> = call
                    .requests()
                    .iter()
                    .map(|r| {
                        let mut params = r["params"].clone();
                        if let Some(params) = params.as_object_mut() {
                            params.remove("_meta");
                        }
                        json!({"method": r["method"], "params": params})
                    })
                    .collect();
                if front == Front::Http && asked.is_some() {
                    problems.check(call.kind.as_deref() == Some("text/event-stream"), || {
                        format!(
                            "{label}: {tool}: a request during the call, and a {:?} response",
                            call.kind
                        )
                    });
                }
                problems.check(
                    requests.len() == usize::from(asked.is_some())
                        && requests
                            .iter()
                            .all(|r| Some(&r["method"]) == asked.map(Value::from).as_ref()),
                    || format!("{label}: {tool} {arguments}: the client was asked {requests:?}"),
                );
                problems.check(call.result().to_string().contains(says), || {
                    format!(
                        "{label}: {tool} {arguments}: the answer does not say {says:?}: {:?}",
                        call.answer
                    )
                });
                problems.check(
                    call.result()["isError"] != json!(true) && call.error().is_null(),
                    || format!("{label}: {tool} failed: {:?}", call.answer),
                );
                seen.push((label, json!({"asked": requests, "answer": call.outcome()})));
            }
        }
        problems.same(&format!("{tool} {arguments}"), &seen);
    }
    problems.done()
}

/// The `_meta` of the server's requests during a call, as the client gets them: the same on
/// every path (rmcp's way gives each request a progress token of its own, so the client may
/// report progress on it; compared by whether it is there, its value being per request).
pub async fn server_request_meta(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    let mut seen = Vec::new();
    let params = json!({"name": "t-ask", "arguments": {"via": "sampling"}});
    for gateway in &mut paths.all {
        for (n, call) in twice(gateway, &params).await?.into_iter().enumerate() {
            let label = label(gateway, n + 1);
            let metas: Vec<Value> = call
                .requests()
                .iter()
                .map(|r| {
                    let mut meta = r["params"]["_meta"].clone();
                    if let Some(token) = meta.get_mut("progressToken") {
                        *token = json!("(a token)");
                    }
                    meta
                })
                .collect();
            problems.check(metas.len() == 1, || {
                format!("{label}: the client was asked {} times", metas.len())
            });
            seen.push((label, json!(metas)));
        }
    }
    problems.same("the _meta of a request during a call", &seen);
    problems.done()
}

/// A call of a server whose entry says `"timeout": 1` that runs longer: the same error on
/// every path, and the server hears the cancel. (`resultType` is left out of the comparison:
/// `checks::legacy_results` is about it.)
pub async fn timeout(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    let mut seen = Vec::new();
    for gateway in &mut paths.all {
        // The tool's first call learns it answers plainly; the one that times out takes the lane.
        gateway
            .call(json!({"name": "slow-sleep", "arguments": {"ms": 1}}))
            .await?;
        let cancelled = gateway.logged("sleep cancelled by the client");
        let call = gateway
            .call_on_lane(json!({"name": "slow-sleep", "arguments": {"ms": 60_000}}))
            .await?;
        let label = label(gateway, 2);
        gateway
            .wait_logged("sleep cancelled by the client", cancelled + 1)
            .await
            .with_context(|| format!("{label}: the server never heard of the timeout"))?;
        problems.check(
            call.result()["isError"] == json!(true) || !call.error().is_null(),
            || {
                format!(
                    "{label}: a call past its timeout did not fail: {:?}",
                    call.answer
                )
            },
        );
        seen.push((label, call.outcome_but_result_type()));
    }
    problems.same("timeout", &seen);
    problems.done()
}

/// The client's trace context (`traceparent`, `tracestate`, `baggage`) and a vendor's key.
pub fn client_meta() -> Value {
    json!({
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
        "baggage": "userId=alice,isProduction=false",
        "com.example/tenant": "acme",
    })
}

/// `_meta` passthrough: a server that answers with the `_meta` it received (`t-echo_meta`) sees
/// the client's trace context and vendor key on every path — its `traceparent` in the client's
/// trace, with the gateway's own span id (W3C trace context through a hop) — and never the
/// client's progress token (the gateway's own stands in for it) or the 2026-07-28 lifecycle keys
/// (which describe the client's session with the gateway, not the gateway's with the server).
pub async fn meta(front: Front) -> Result<()> {
    let mut paths = paths(front).await?;
    let mut problems = Problems::default();
    let token = json!("parity-meta-token");
    let mut with_token = client_meta();
    with_token["progressToken"] = token.clone();
    let mut lifecycle = client_meta();
    lifecycle["io.modelcontextprotocol/protocolVersion"] = json!(super::PROTOCOL_VERSION);
    lifecycle["io.modelcontextprotocol/clientInfo"] = json!({"name": "parity", "version": "1"});
    lifecycle["io.modelcontextprotocol/clientCapabilities"] = super::client_capabilities();
    lifecycle["io.modelcontextprotocol/logLevel"] = json!("debug");
    // The lane takes a call whose `_meta` has the client's own keys and a progress token; one
    // with a lifecycle key goes rmcp's way (so its second call is not checked for the lane).
    for (variant, sent, lane) in [
        ("trace context", client_meta(), true),
        ("and a progress token", with_token, true),
        ("and lifecycle keys", lifecycle, false),
    ] {
        let mut seen = Vec::new();
        let params = json!({"name": "t-echo_meta", "arguments": {}, "_meta": sent});
        for gateway in &mut paths.all {
            let calls = if lane {
                twice(gateway, &params).await?
            } else {
                [
                    gateway.call(params.clone()).await?,
                    gateway.call(params.clone()).await?,
                ]
            };
            for (n, call) in calls.into_iter().enumerate() {
                let label = label(gateway, n + 1);
                let mut received: Value = serde_json::from_str(call.text())
                    .with_context(|| format!("{label}: {variant}: {:?}", call.answer))?;
                if let Some(upstream) = received
                    .as_object_mut()
                    .and_then(|m| m.remove("progressToken"))
                {
                    problems.check(upstream != token, || {
                        format!("{label}: {variant}: the server got the client's progress token")
                    });
                }
                // The gateway's span id stands in the client's trace: same version, trace id and
                // flags, another span id.
                let sent = client_meta()["traceparent"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let traceparent = received
                    .get("traceparent")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let (sent_parts, got_parts): (Vec<&str>, Vec<&str>) =
                    (sent.split('-').collect(), traceparent.split('-').collect());
                problems.check(
                    got_parts.len() == 4
                        && got_parts[0] == sent_parts[0]
                        && got_parts[1] == sent_parts[1]
                        && got_parts[3] == sent_parts[3]
                        && got_parts[2] != sent_parts[2]
                        && got_parts[2].len() == 16,
                    || {
                        format!(
                            "{label}: {variant}: traceparent {traceparent} is not a child of {sent}"
                        )
                    },
                );
                if let Some(meta) = received.as_object_mut() {
                    meta.insert("traceparent".into(), json!(sent));
                }
                problems.check(received == client_meta(), || {
                    format!("{label}: {variant}: the server received {received}")
                });
                seen.push((label, received));
            }
        }
        problems.same(&format!("_meta {variant}"), &seen);
    }
    problems.done()
}
