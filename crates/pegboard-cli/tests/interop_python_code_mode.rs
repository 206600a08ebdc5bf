//! Code mode with the OFFICIAL MCP Python SDK (`mcp` 2.x) as the client, over stdio and
//! streamable HTTP, on both call paths (`--no-express` and the default; code mode itself keeps
//! every call on rmcp's path, as search mode does): scripts that chain, loop, branch and run calls
//! in parallel answer what the same calls made one by one answer; a named client's hidden tool
//! stays hidden from code (over stdio with `--client`, over HTTP by its token); a session whose script spins until its time limit leaves another
//! session answering, and so do scripts that hit every other limit meanwhile, each answered
//! with its error. The client is `tests/python/code_mode.py`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// Per run of the Python client.
const RUN: Duration = Duration::from_secs(120);

fn python() -> PathBuf {
    common::installed(common::test_deps().join("venv/bin/python"))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/code_mode.py")
}

/// Run `code_mode.py ARGS`: the JSON line it printed.
async fn client(args: &[&str]) -> Result<Value> {
    let child = tokio::process::Command::new(python())
        .arg(script())
        .args(args)
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("spawn code_mode.py")?;
    let out = tokio::time::timeout(RUN, child.wait_with_output())
        .await
        .with_context(|| format!("code_mode.py {args:?} did not finish within {RUN:?}"))??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!(
            "code_mode.py {args:?} failed ({})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            out.status
        );
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .context("no output")?;
    serde_json::from_str(line).with_context(|| format!("not JSON: {line}\nstderr:\n{stderr}"))
}

/// A config of the units and notes demo servers, with `codeMode` as given; `with_reader`: and a
/// client `reader` that may see only `units-list_units` (then HTTP requires a token).
fn config(dir: &Path, code_mode: Value, with_reader: bool) -> Result<PathBuf> {
    let mut config = json!({
        "mcpServers": {
            "units": common::demo_server("units", &[]),
            "notes": common::demo_server("notes", &[])
        },
        "codeMode": code_mode,
    });
    if with_reader {
        config["clients"] = json!({
            "reader": { "token": "reader-token-0123456789abcdef", "tools": ["units-list_units"] }
        });
    }
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// The script's value (`run_code`'s first text block, parsed).
fn value(ran: &Value) -> Value {
    assert_eq!(ran["is_error"], false, "{ran}");
    let text = ran["text"].as_str().unwrap_or_default();
    let first = text.split("\nconsole:\n").next().unwrap_or_default();
    serde_json::from_str(first).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn check_parity(out: &Value) {
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        tools,
        ["search_tools", "describe_tools", "run_code"],
        "{out}"
    );
    // The server's instructions say how to use the three.
    let instructions = out["instructions"].as_str().unwrap_or_default();
    for tool in ["search_tools", "describe_tools", "run_code"] {
        assert!(instructions.contains(tool), "{instructions:?}");
    }
    for name in ["chain", "loop", "branch", "parallel", "failing"] {
        let scenario = &out["scenarios"][name];
        let ran = &scenario["code"];
        assert_eq!(value(ran), scenario["direct"], "{name}: {scenario}");
        assert_eq!(ran["structured"]["result"], scenario["direct"], "{name}");
    }
    // The direct answers are real conversions, not two equal nothings.
    assert!(
        out["scenarios"]["chain"]["direct"][0]
            .as_str()
            .unwrap()
            .contains("6.213712 mi"),
        "{out}"
    );
    assert_eq!(
        out["scenarios"]["loop"]["direct"].as_array().unwrap().len(),
        5
    );
    assert_eq!(out["scenarios"]["branch"]["direct"][0], "hot");
    assert_eq!(out["scenarios"]["failing"]["direct"][0], "ToolError");
    let calls = out["scenarios"]["parallel"]["code"]["structured"]["calls"]
        .as_array()
        .unwrap();
    assert_eq!(calls.len(), 10);
    assert!(
        calls
            .iter()
            .all(|c| c["name"] == "units-convert" && c["ok"] == true),
        "{calls:?}"
    );
    // A note the script added is found by a plain call.
    let id = value(&out["added"]);
    let found = out["search_after"].as_str().unwrap();
    assert!(
        found.starts_with("1 note(s) match") && found.contains("from-code-7f3"),
        "{found}"
    );
    assert!(
        found.contains(&format!("#{}", id.as_str().unwrap())),
        "{found} / id {id}"
    );
    // Declarations.
    let described = out["describe"].as_str().unwrap();
    assert!(described.contains("declare const tools: {"), "{described}");
    assert!(described.contains("  units: {"), "{described}");
    assert!(described.contains("convert(args: {"), "{described}");
    assert!(described.contains("@tool units-convert"), "{described}");
    assert!(
        described.contains("`nope-x` is not a tool on this board"),
        "{described}"
    );
    // Errors say where.
    assert_eq!(out["syntax"]["is_error"], true);
    assert_eq!(
        out["syntax"]["structured"]["error"]["kind"], "syntax",
        "{}",
        out["syntax"]
    );
    assert_eq!(
        out["syntax"]["structured"]["error"]["line"], 2,
        "{}",
        out["syntax"]
    );
    let thrown = &out["thrown"];
    assert_eq!(thrown["structured"]["error"]["kind"], "thrown", "{thrown}");
    assert_eq!(thrown["structured"]["error"]["line"], 2, "{thrown}");
    assert_eq!(
        thrown["structured"]["calls"][0]["name"], "units-list_units",
        "{thrown}"
    );
    assert!(
        thrown["text"]
            .as_str()
            .unwrap()
            .contains("Calls made before it: units-list_units ok"),
        "{thrown}"
    );
    // Progress: a step per finished call, counting up.
    let steps = out["progress"].as_array().unwrap();
    assert_eq!(steps.len(), 10, "{steps:?}");
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["progress"].as_f64(), Some((i + 1) as f64), "{steps:?}");
    }
    assert_eq!(
        value(&out["with_progress"]),
        out["scenarios"]["parallel"]["direct"]
    );
}

async fn parity_stdio(extra: &[&str]) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!(true), false)?;
    let pegboard = common::pegboard();
    let serve_args: Vec<String> = extra.iter().map(|a| format!("--serve-arg={a}")).collect();
    let mut args = vec![
        "--stdio",
        pegboard.to_str().context("utf-8")?,
        config.to_str().context("utf-8")?,
    ];
    args.extend(serve_args.iter().map(String::as_str));
    args.push("parity");
    check_parity(&client(&args).await?);
    Ok(())
}

#[tokio::test]
async fn python_stdio_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    parity_stdio(&[]).await
}

#[tokio::test]
async fn python_stdio_no_express_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    parity_stdio(&["--no-express"]).await
}

#[tokio::test]
async fn python_stdio_code_mode_flag_turns_it_on() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = common::write_demo_config(dir.path());
    let pegboard = common::pegboard();
    let out = client(&[
        "--stdio",
        pegboard.to_str().context("utf-8")?,
        config.to_str().context("utf-8")?,
        "--serve-arg=--code-mode",
        "parity",
    ])
    .await?;
    check_parity(&out);
    Ok(())
}

async fn parity_http(extra: &[&str]) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!(true), false)?;
    let (mut child, url) = common::serve_http(&config, extra, &[]).await?;
    let out = client(&["--http", &url, "parity"]).await;
    common::terminate(&mut child).await?;
    check_parity(&out?);
    Ok(())
}

#[tokio::test]
async fn python_http_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    parity_http(&[]).await
}

#[tokio::test]
async fn python_http_no_express_scripts_answer_as_the_calls_one_by_one() -> Result<()> {
    parity_http(&["--no-express"]).await
}

#[tokio::test]
async fn python_stdio_a_hidden_tool_stays_hidden_from_code() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({"keepTools": true}), true)?;
    let pegboard = common::pegboard();
    let out = client(&[
        "--stdio",
        pegboard.to_str().context("utf-8")?,
        config.to_str().context("utf-8")?,
        "--serve-arg=--client",
        "--serve-arg=reader",
        "hidden",
    ])
    .await?;
    check_hidden(&out);
    Ok(())
}

#[tokio::test]
async fn python_http_a_named_clients_hidden_tool_stays_hidden_from_code() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({"keepTools": true}), true)?;
    let (mut child, url) = common::serve_http(&config, &[], &[]).await?;
    let out = client(&[
        "--http",
        &url,
        "--token",
        "reader-token-0123456789abcdef",
        "hidden",
    ])
    .await;
    common::terminate(&mut child).await?;
    check_hidden(&out?);
    Ok(())
}

/// What the client `reader` (it may see only `units-list_units`) got in the `hidden` scenario.
fn check_hidden(out: &Value) {
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        tools,
        [
            "search_tools",
            "describe_tools",
            "run_code",
            "units-list_units"
        ],
        "{out}"
    );
    // Not in `tools`: calling it is a TypeError of the script's own.
    let script = value(&out["script"]);
    assert_eq!(script[0], "undefined", "{out}");
    // By name: the same answer as a plain tools/call of a tool that does not exist.
    let by_call = value(&out["by_call"]);
    let direct = out["direct"]["error"]
        .as_str()
        .or(out["direct"]["text"].as_str())
        .unwrap_or_default();
    assert!(by_call.as_str().unwrap().contains("units-convert"), "{out}");
    assert!(
        direct.contains(by_call.as_str().unwrap()),
        "direct {direct:?} vs script {by_call}"
    );
    assert!(
        value(&out["allowed"]).as_str().unwrap().contains("length:"),
        "{out}"
    );
    assert!(
        out["describe"]
            .as_str()
            .unwrap()
            .contains("`units-convert` is not a tool on this board"),
        "{out}"
    );
}

#[tokio::test]
async fn python_http_a_runaway_script_leaves_other_sessions_answering() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({"timeoutSecs": 20}), false)?;
    let (mut child, url) = common::serve_http(&config, &[], &[]).await?;
    let out = client(&["--http", &url, "busy"]).await;
    common::terminate(&mut child).await?;
    let out = out?;
    let other = out["other"].as_array().unwrap();
    for (i, text) in other[..5].iter().enumerate() {
        assert!(
            text.as_str()
                .unwrap()
                .starts_with(&format!("{} km = ", i + 1)),
            "{out}"
        );
    }
    assert_eq!(value(&other[5]), json!(42));
    let runaway = &out["runaway"];
    assert_eq!(runaway["is_error"], true, "{runaway}");
    assert_eq!(
        runaway["structured"]["error"]["kind"], "timeout",
        "{runaway}"
    );
    // The other session was answered while the script was still spinning.
    assert_eq!(out["order"], json!(["other", "runaway"]), "{out}");
    Ok(())
}

#[tokio::test]
async fn python_http_every_limit_is_hit_while_another_session_calls() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = config(
        dir.path(),
        json!({"timeoutSecs": 5, "memoryMib": 16, "maxCalls": 3, "maxParallel": 2, "maxOutputKib": 16}),
        false,
    )?;
    // And the test server, whose `sleep` outlasts the time limit.
    let mut with_test: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    with_test["mcpServers"]["t"] = common::demo_server("test", &[]);
    std::fs::write(&path, with_test.to_string())?;
    let (mut child, url) = common::serve_http(&path, &[], &[]).await?;
    let out = client(&["--http", &url, "limits"]).await;
    common::terminate(&mut child).await?;
    let out = out?;
    // The other session: every answer right.
    let answers = out["other"]["answers"].as_array().context("answers")?;
    assert_eq!(answers.len(), 40, "{out}");
    for (i, text) in answers.iter().enumerate() {
        let text = text.as_str().unwrap_or_default();
        assert!(text.starts_with(&format!("{} km = ", i + 1)), "{text}");
    }
    // Each limit answered with its own error.
    let limits = &out["limits"];
    for (name, kind) in [
        ("memory", "memory"),
        ("stack", "stack"),
        ("max_calls", "max_calls"),
        ("output", "output"),
        ("thrown", "thrown"),
        ("stalled", "stalled"),
        ("pending", "timeout"),
    ] {
        let ran = &limits[name];
        assert_eq!(ran["is_error"], true, "{name}: {ran}");
        assert_eq!(ran["structured"]["error"]["kind"], kind, "{name}: {ran}");
    }
    assert_eq!(
        limits["max_calls"]["structured"]["calls"]
            .as_array()
            .map(Vec::len),
        Some(3),
        "{}",
        limits["max_calls"]
    );
    assert!(
        limits["thrown"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("\"code\":7"),
        "{}",
        limits["thrown"]
    );
    // The log is cut at the output limit; the run itself succeeds.
    let log = &limits["log"];
    assert_eq!(log["is_error"], false, "{log}");
    let kept = log["structured"]["log"].as_str().unwrap_or_default();
    assert!(kept.len() <= 16 * 1024 + 64, "{} bytes kept", kept.len());
    assert!(kept.ends_with("[log cut at the output limit]"), "{kept}");
    let runaway = &out["runaway"];
    assert_eq!(
        runaway["structured"]["error"]["kind"], "timeout",
        "{runaway}"
    );
    // The other session's calls were all answered while the runaway script still spun.
    let order = out["order"].as_array().context("order")?;
    let at = |name: &str| order.iter().position(|o| o == name);
    assert!(at("other") < at("runaway"), "{out}");
    // Their times, beside the same calls' before any script ran (shown, not judged: a shared
    // machine's times are no test).
    for phase in ["quiet", "other"] {
        let mut ms: Vec<f64> = out[phase]["ms"]
            .as_array()
            .context("ms")?
            .iter()
            .filter_map(Value::as_f64)
            .collect();
        ms.sort_by(f64::total_cmp);
        eprintln!(
            "{phase}: 40 calls, median {:.1} ms, max {:.1} ms",
            ms[ms.len() / 2],
            ms[ms.len() - 1]
        );
    }
    Ok(())
}
