//! Code mode measured: multi-step tasks on the demo servers (units, docs), each done as plain
//! `tools/call`s (the model reads every tool's definition and every result) and as one
//! `run_code` (the model reads the three code-mode tools, one `search_tools` and one
//! `describe_tools` answer, and the script's result). Prints a Markdown table: tokens read,
//! round trips, wall time. Both ways are checked to reach the same answer.
//!
//! Tokens are estimated as the gateway's result cap estimates them: UTF-8 bytes / 4, rounded up
//! (`maxResultTokens`), of the JSON of `tools/list`'s tools and of each result's text blocks.
//! What the model writes (its calls, its script) is counted apart, as tokens written. A model
//! reads its whole context again at each turn: "context over all turns" adds, for every round
//! trip and the final answer, the tokens of the conversation so far (definitions, calls,
//! results), which is what an API bills as input tokens.
//!
//! `cargo run -p pegboard-cli --example code_mode_tasks -- target/debug/pegboard [RUNS]`

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{DynService, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, Box<dyn DynService<RoleClient>>>;

fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What one way of doing a task cost.
#[derive(Default, Debug)]
struct Cost {
    read: usize,
    /// The conversation so far (definitions, calls written, results read).
    context: usize,
    /// The context summed over every turn.
    billed: usize,
    written: usize,
    round_trips: usize,
    wall: Duration,
}

struct Session {
    client: Client,
    cost: Cost,
}

impl Session {
    async fn start(pegboard: &PathBuf, config: &PathBuf, code_mode: bool) -> Result<Self> {
        let cmd = tokio::process::Command::new(pegboard).configure(|c| {
            c.args(["serve", "--config"]).arg(config);
            if code_mode {
                c.arg("--code-mode");
            }
        });
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()?;
        let client = ().into_dyn().serve(transport).await?;
        let mut session = Self {
            client,
            cost: Cost::default(),
        };
        // The definitions the model reads before its first call.
        let tools = session.client.list_all_tools().await?;
        session.cost.read += tokens(serde_json::to_vec(&tools)?.len());
        session.cost.context = session.cost.read;
        Ok(session)
    }

    async fn call(&mut self, name: &str, arguments: Value) -> Result<String> {
        let Value::Object(arguments) = arguments else {
            bail!("arguments are an object")
        };
        let written = tokens(name.len() + serde_json::to_vec(&arguments)?.len());
        self.cost.billed += self.cost.context;
        self.cost.written += written;
        let request = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let started = Instant::now();
        let result = self.client.call_tool(request).await?;
        self.cost.wall += started.elapsed();
        self.cost.round_trips += 1;
        let text = text(&result);
        self.cost.read += tokens(text.len());
        self.cost.context += written + tokens(text.len());
        if result.is_error == Some(true) {
            bail!("{name} failed: {text}");
        }
        Ok(text)
    }

    async fn run_code(&mut self, code: &str) -> Result<Value> {
        let text = self.call("run_code", json!({ "code": code })).await?;
        let first = text.split("\nconsole:\n").next().unwrap_or_default();
        serde_json::from_str(first).with_context(|| text.clone())
    }
}

fn number_after_equals(text: &str) -> Result<f64> {
    text.split(" = ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .with_context(|| format!("no number in {text:?}"))
}

/// Convert 1..=50 km to miles and sum them.
async fn sum_plain(s: &mut Session) -> Result<Value> {
    let mut sum = 0.0;
    for v in 1..=50 {
        sum += number_after_equals(
            &s.call(
                "units-convert",
                json!({"value": v, "from": "km", "to": "mi"}),
            )
            .await?,
        )?;
    }
    Ok(json!((sum * 1000.0).round() / 1000.0))
}

const SUM: &str = r#"
const all = await Promise.all([...Array(50).keys()].map(i =>
  tools.units.convert({value: i + 1, from: "km", to: "mi"})));
const sum = all.reduce((s, t) => s + parseFloat(t.split(" = ")[1]), 0);
return Math.round(sum * 1000) / 1000;
"#;

/// Search the docs, then read each match.
async fn docs_plain(s: &mut Session) -> Result<Value> {
    let found = s.call("docs-search", json!({"query": "tool"})).await?;
    let mut titles = Vec::new();
    for line in found.lines().filter(|l| l.starts_with("- ")) {
        let id = line[2..].split(' ').next().unwrap_or_default();
        let passage = s.call("docs-read", json!({"id": id})).await?;
        titles.push(json!({"id": id, "words": passage.split_whitespace().count()}));
    }
    Ok(json!(titles))
}

const DOCS: &str = r#"
const found = await tools.docs.search({query: "tool"});
const ids = found.split("\n").filter(l => l.startsWith("- ")).map(l => l.slice(2).split(" ")[0]);
const texts = await Promise.all(ids.map(id => tools.docs.read({id})));
return ids.map((id, i) => ({id, words: texts[i].split(/\s+/).filter(w => w).length}));
"#;

/// Convert 10, 20, 30... km until the result passes 100 mi.
async fn until_plain(s: &mut Session) -> Result<Value> {
    let mut v = 10;
    loop {
        let miles = number_after_equals(
            &s.call(
                "units-convert",
                json!({"value": v, "from": "km", "to": "mi"}),
            )
            .await?,
        )?;
        if miles > 100.0 {
            return Ok(json!({"km": v, "mi": miles}));
        }
        v += 10;
    }
}

const UNTIL: &str = r#"
for (let v = 10; ; v += 10) {
  const mi = parseFloat((await tools.units.convert({value: v, from: "km", to: "mi"})).split(" = ")[1]);
  if (mi > 100) return {km: v, mi};
}
"#;

/// The model's steps before its script: find the tools, read their declarations.
async fn discover(s: &mut Session, query: &str, names: &[&str]) -> Result<()> {
    s.call("search_tools", json!({"query": query, "limit": 3}))
        .await?;
    s.call("describe_tools", json!({"names": names})).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let pegboard = PathBuf::from(args.next().context("the pegboard binary's path")?);
    let dir = std::env::temp_dir().join(format!("pegboard-code-mode-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let entry = |name: &str| json!({"command": pegboard, "args": ["demo-server", name]});
    let config = dir.join("pegboard.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"units": entry("units"), "notes": entry("notes"), "docs": entry("docs")}}).to_string(),
    )?;
    println!(
        "| Task | Way | Tokens read | Tokens written | Context over all turns | Round trips | Wall time (calls) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    let tasks: [(&str, &str, &[&str], &str); 3] = [
        (
            "Convert 50 values and sum",
            "convert km to miles",
            &["units-convert"],
            SUM,
        ),
        (
            "Search docs, read each match",
            "search documentation",
            &["docs-search", "docs-read"],
            DOCS,
        ),
        (
            "Call until a condition holds",
            "convert km to miles",
            &["units-convert"],
            UNTIL,
        ),
    ];
    for (i, (task, query, names, script)) in tasks.iter().enumerate() {
        let mut plain = Session::start(&pegboard, &config, false).await?;
        let expected = match i {
            0 => sum_plain(&mut plain).await?,
            1 => docs_plain(&mut plain).await?,
            _ => until_plain(&mut plain).await?,
        };
        let mut code = Session::start(&pegboard, &config, true).await?;
        discover(&mut code, query, names).await?;
        let got = code.run_code(script).await?;
        if got != expected {
            bail!("{task}: run_code answered {got}, the plain calls {expected}");
        }
        for (way, cost) in [
            ("plain tools/call", &plain.cost),
            ("search + describe + run_code", &code.cost),
        ] {
            println!(
                "| {task} | {way} | {} | {} | {} | {} | {:.1} ms |",
                cost.read,
                cost.written,
                // The final turn, which answers, reads it all once more.
                cost.billed + cost.context,
                cost.round_trips,
                cost.wall.as_secs_f64() * 1000.0
            );
        }
        plain.client.cancel().await?;
        code.client.cancel().await?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
