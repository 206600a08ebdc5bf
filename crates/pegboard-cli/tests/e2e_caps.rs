//! Result caps end to end (issue 24, item 4): `pegboard serve` in front of a server written with
//! the official Python SDK (`tests/python/caps_server.py`) that answers a 2 MiB text of multi-byte
//! characters, a large `structuredContent`, an image and an embedded resource past the cap, and
//! results under it. Over the stdio front (the cap from the entry's `maxResultTokens`) and the
//! HTTP front (from `--max-result-tokens`), with the express lane and with `--no-express`: every
//! tool is called twice, so the lane carries the second call (its `express call` trace line is
//! awaited), and the client must get the same answer on every path — the exact notice, a cut at
//! a character boundary, an `isError` result for structured content over the cap, and a result
//! under the cap exactly as the server sent it (byte for byte on the lane, which passes the
//! server's line; as the same JSON on rmcp's way, which re-encodes it).

mod caps;
mod common;

use anyhow::{Context, Result, bail, ensure};
use caps::{Answer, Front, Gateway, Way, board, passed_verbatim, server_lines};
use serde_json::{Value, json};

/// The cap of these tests, in tokens (4,000 bytes).
const CAP: usize = 1_000;

/// The text tool's size: 2 MiB, "ab" then 699,050 three-byte characters.
const TWO_MIB: usize = 2 << 20;

/// What a call must answer.
enum Expect {
    /// A result whose `content` is exactly this, not an error, with no `structuredContent`.
    Cut(Value),
    /// An `isError` result with this one text block, no `structuredContent`.
    Refused(String),
    /// The server's result, unchanged.
    AsSent,
}

struct Case {
    tool: &'static str,
    arguments: Value,
    expect: Expect,
}

/// The first 600 characters of `text` (a failure must not print 2 MiB).
fn short(text: &str) -> String {
    text.chars().take(600).collect()
}

fn text(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

fn notice(total: usize) -> Value {
    text(format!(
        "[pegboard: result cut at {CAP} of about {total} tokens; ask for less]"
    ))
}

/// The estimated tokens of `bytes` bytes (UTF-8 bytes / 4, rounded up).
fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

fn cases() -> Vec<Case> {
    // The cut at 4,000 bytes falls inside a character ("ab" + 3 × 1,332 = 3,998): it backs off
    // to the boundary before it.
    let kept = format!("ab{}", "€".repeat(1_332));
    // The structured content as the gateway sizes it: its compact JSON.
    let rows: Vec<Value> = (0..20_000)
        .map(|i| json!({"row": i, "name": format!("item {i}")}))
        .collect();
    let structured = serde_json::to_string(&json!({"rows": rows})).unwrap_or_default();
    // 8,000 bytes of image are 10,668 of base64; with "a picture:" (10) 10,678 bytes.
    let image_b64 = 8_000usize.div_ceil(3) * 4;
    vec![
        Case {
            tool: "caps-text",
            arguments: json!({"size": TWO_MIB}),
            expect: Expect::Cut(json!([text(kept), notice(tokens(TWO_MIB))])),
        },
        Case {
            tool: "caps-rows",
            arguments: json!({"count": 20_000}),
            expect: Expect::Refused(format!(
                "[pegboard: the result's structuredContent is about {} tokens, over the cap of {CAP} tokens (maxResultTokens); it was not passed on, as JSON is never cut; ask for less]",
                tokens(structured.len())
            )),
        },
        Case {
            tool: "caps-picture",
            arguments: json!({"size": 8_000}),
            expect: Expect::Cut(json!([
                text("a picture:"),
                notice(tokens("a picture:".len() + image_b64))
            ])),
        },
        Case {
            tool: "caps-document",
            arguments: json!({"size": 20_000}),
            expect: Expect::Cut(json!([
                text("a document:"),
                notice(tokens("a document:".len() + 20_000))
            ])),
        },
        Case {
            tool: "caps-small",
            arguments: json!({}),
            expect: Expect::AsSent,
        },
        // 3,000 bytes of text, under the cap, but 18,000 in JSON: the lane reads it to know,
        // and must still pass it as sent.
        Case {
            tool: "caps-escaped",
            arguments: json!({"count": 3_000}),
            expect: Expect::AsSent,
        },
    ]
}

/// Check one answer of `case` (`lane`: the express lane carried it).
fn check(case: &Case, answer: &Answer, lane: bool, server: &[String], what: &str) -> Result<()> {
    let result = answer.result();
    ensure!(result.is_object(), "{what}: no result: {:.300}", answer.raw);
    match &case.expect {
        Expect::Cut(content) => {
            ensure!(
                result["content"] == *content,
                "{what}: content {}",
                short(&result["content"].to_string())
            );
            ensure!(result["isError"] != json!(true), "{what}: an error");
            ensure!(result.get("structuredContent").is_none(), "{what}");
        }
        Expect::Refused(message) => {
            ensure!(result["isError"] == json!(true), "{what}: not an error");
            ensure!(
                result["content"] == json!([text(message.as_str())]),
                "{what}: content {}",
                short(&result["content"].to_string())
            );
            ensure!(result.get("structuredContent").is_none(), "{what}");
        }
        Expect::AsSent if lane => {
            passed_verbatim(server, answer)
                .with_context(|| format!("{what}: not the server's line: {:.300}", answer.raw))?;
        }
        Expect::AsSent => {
            let sent = server.iter().any(|line| {
                serde_json::from_str::<Value>(line).is_ok_and(|l| l["result"] == *result)
            });
            ensure!(sent, "{what}: not the server's result: {:.300}", answer.raw);
        }
    }
    Ok(())
}

/// Every case through both ways of `front` (`flags` set the cap, or `entry` does): each tool
/// called twice on each way, every answer checked, and all four answers of a tool the same.
async fn caps_on_both_paths(front: Front, entry: Value, flags: &[&str]) -> Result<()> {
    let dirs = [tempfile::tempdir()?, tempfile::tempdir()?];
    let configs = [
        board(dirs[0].path(), entry.clone())?,
        board(dirs[1].path(), entry)?,
    ];
    let (mut express, mut plain) = tokio::try_join!(
        Gateway::start(&configs[0], front, Way::Express, flags),
        Gateway::start(&configs[1], front, Way::NoExpress, flags)
    )?;
    for gateway in [&mut express, &mut plain] {
        gateway.expect_tool("caps-text").await?;
    }
    let mut failures = Vec::new();
    for case in cases() {
        let mut answers = Vec::new();
        for (gateway, dir) in [(&mut express, &dirs[0]), (&mut plain, &dirs[1])] {
            for nth in ["first", "second"] {
                let what = format!("{} {nth} call over {front:?}, {:?}", case.tool, gateway.way);
                let before = gateway.lane_calls();
                let answer = gateway.call(case.tool, case.arguments.clone()).await?;
                let lane = nth == "second" && gateway.way == Way::Express;
                if lane {
                    gateway.took_the_lane(before, &what).await?;
                } else if gateway.lane_calls() != before {
                    bail!("{what}: took the lane");
                }
                if matches!(case.expect, Expect::AsSent) {
                    gateway.sync_server_copy().await?;
                }
                let server = server_lines(dir.path())?;
                if let Err(e) = check(&case, &answer, lane, &server, &what) {
                    failures.push(format!("{e:#}"));
                }
                answers.push((what, answer));
            }
        }
        let (first_what, first) = &answers[0];
        for (what, answer) in &answers[1..] {
            if answer.result() != first.result() {
                failures.push(format!(
                    "{what} differs from {first_what}:\n{:.600}\n{:.600}",
                    answer.raw, first.raw
                ));
            }
        }
    }
    ensure!(failures.is_empty(), "{}", failures.join("\n\n"));
    Ok(())
}

#[tokio::test]
async fn over_stdio_results_past_the_entrys_cap_are_cut_alike_on_both_paths() -> Result<()> {
    caps_on_both_paths(Front::Stdio, json!({"maxResultTokens": CAP}), &[]).await
}

#[tokio::test]
async fn over_http_results_past_the_global_cap_are_cut_alike_on_both_paths() -> Result<()> {
    let cap = CAP.to_string();
    caps_on_both_paths(Front::Http, json!({}), &["--max-result-tokens", &cap]).await
}

/// An entry's own cap wins over `--max-result-tokens`: with the entry's cap above the 2 MiB
/// text, the text comes whole on both ways, though the global cap is far below it.
#[tokio::test]
async fn an_entrys_cap_wins_over_the_global_one() -> Result<()> {
    let global = CAP.to_string();
    let entry = json!({"maxResultTokens": 1_000_000});
    for way in [Way::Express, Way::NoExpress] {
        let dir = tempfile::tempdir()?;
        let config = board(dir.path(), entry.clone())?;
        let flags = ["--max-result-tokens", global.as_str()];
        let mut gateway = Gateway::start(&config, Front::Stdio, way, &flags).await?;
        gateway.expect_tool("caps-text").await?;
        for nth in ["first", "second"] {
            let answer = gateway.call("caps-text", json!({"size": TWO_MIB})).await?;
            let content = &answer.result()["content"];
            let whole = content[0]["text"].as_str().map(str::len);
            ensure!(
                whole == Some(TWO_MIB) && content.as_array().map(Vec::len) == Some(1),
                "{nth} call, {way:?}: not the whole text: {}",
                short(&content.to_string())
            );
        }
    }
    Ok(())
}
