//! The description scan measured on a corpus: published tool-poisoning examples
//! (`tests/data/poisoning.json`, each with its source) and real benign descriptions: the 1,853
//! functions of the Berkeley Function Calling Leaderboard (`crates/pegboard/benches/data/bfcl`,
//! the search recall harness's set), the demo servers, and the third-party servers the tests run
//! (`@modelcontextprotocol/server-everything`, `mcp-server-time`; installed by
//! `scripts/setup-test-deps.sh`, and required: the test fails without them).
//!
//! Prints the detection and false-positive rates (`--nocapture`) and holds exactly what README.md
//! ("Pinning and guards") and docs/pins-and-guards.md say of them: every example flagged but the
//! ones named in [`KNOWN_MISSED`], and none of the 1,875 real descriptions. A change of either
//! figure, better or worse, fails here until the docs say the new one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pegboard_gateway::guards::{BoardTool, other_server_mentions};
use pegboard_gateway::{guards::Marker, testing::scan_tool};
use rmcp::ServiceExt;
use rmcp::model::Tool;
use serde_json::{Value, json};

/// The published examples the scan does not flag, by id: quiet, documentation-like wording with
/// none of the markers (the docs name both). The floor is not a count measured once (`>= 16`
/// would let a different example slip while another is caught, and would hide an improvement):
/// every example of the corpus must be flagged except exactly these, so the detected count is
/// the corpus's own count minus this list, a regression names the example it lost, and an
/// example newly caught fails too until it leaves this list (and the docs' "16 of 18").
const KNOWN_MISSED: [&str; 2] = ["elastic-quiet-cc", "mcptox-preference"];
/// How many published examples the corpus holds (the docs' "of 18").
const EXAMPLES: usize = 18;
/// How many real descriptions the benign corpus holds (the docs' "of 1,875"): the 1,853 BFCL
/// functions and the tools the demo servers, server-everything and mcp-server-time list (their
/// versions are pinned by `scripts/setup-test-deps.sh`).
const BENIGN: usize = 1_875;
/// How many BFCL functions there are (the docs' "0 of 1,853" for cross-server names).
const BFCL_FUNCTIONS: usize = 1_853;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn test_deps() -> PathBuf {
    match std::env::var_os("PEGBOARD_TEST_DEPS") {
        Some(dir) => PathBuf::from(dir),
        None => workspace().join("target/test-deps"),
    }
}

fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "missing third-party test dependency {}: run `scripts/setup-test-deps.sh`",
        path.display()
    );
    path
}

fn tool(name: &str, description: &str, properties: &serde_json::Map<String, Value>) -> Tool {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(k, v)| {
            let d = v.as_str().unwrap_or_default();
            let schema = if d.is_empty() {
                json!({"type": "string"})
            } else {
                json!({"type": "string", "description": d})
            };
            (k.clone(), schema)
        })
        .collect();
    let schema = json!({"type": "object", "properties": props});
    Tool::new(
        name.to_string(),
        description.to_string(),
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    )
}

fn board_tool(service: usize, server: &str, tool: &Tool) -> BoardTool {
    BoardTool {
        name: format!("{server}-{}", tool.name),
        original: tool.name.to_string(),
        service,
        server: server.to_string(),
        texts: vec![(
            "description".into(),
            tool.description.as_deref().unwrap_or_default().to_string(),
        )],
    }
}

fn bfcl() -> Vec<Tool> {
    let path = workspace().join("crates/pegboard/benches/data/bfcl/tools.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON line");
            Tool::new(
                v["name"].as_str().expect("name").to_string(),
                v["description"].as_str().unwrap_or_default().to_string(),
                Arc::new(v["inputSchema"].as_object().cloned().unwrap_or_default()),
            )
        })
        .collect()
}

/// The tools of a real server, listed over rmcp.
async fn listed<S>(server: S) -> Vec<Tool>
where
    S: rmcp::ServerHandler,
{
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.expect("handshake");
    let tools = client.list_all_tools().await.expect("tools/list");
    let _ = client.cancel().await;
    tools
}

async fn listed_child(command: PathBuf, args: &[&str]) -> Vec<Tool> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args);
    let transport = rmcp::transport::TokioChildProcess::new(cmd).expect("spawn");
    let client = ().serve(transport).await.expect("handshake");
    let tools = client.list_all_tools().await.expect("tools/list");
    let _ = client.cancel().await;
    tools
}

#[tokio::test]
async fn the_scan_flags_published_poisoning_and_no_real_descriptions() {
    // Poisoning examples.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/poisoning.json");
    let corpus: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("corpus")).expect("JSON");
    let mut detected = 0;
    let mut missed: Vec<&str> = Vec::new();
    let mut by_marker: BTreeMap<&str, usize> = BTreeMap::new();
    println!("poisoning examples ({}):", corpus.len());
    for entry in &corpus {
        let id = entry["id"].as_str().expect("id");
        let props = entry["properties"].as_object().cloned().unwrap_or_default();
        let poisoned = tool(
            entry["name"].as_str().expect("name"),
            entry["description"].as_str().expect("description"),
            &props,
        );
        let mut findings = scan_tool(&poisoned.name, &poisoned);
        // Its board: the poisoned server, and a trusted one with the tools it talks about.
        let mut board = vec![board_tool(1, "evil", &poisoned)];
        for (i, name) in entry["board"].as_array().into_iter().flatten().enumerate() {
            let trusted = tool(
                name.as_str().expect("name"),
                "A trusted tool.",
                &Default::default(),
            );
            board.push(board_tool(0, "trusted", &trusted));
            let _ = i;
        }
        findings.extend(other_server_mentions(&board));
        let mut markers: Vec<&str> = findings.iter().map(|f| f.marker.as_str()).collect();
        markers.sort_unstable();
        markers.dedup();
        for m in &markers {
            *by_marker.entry(m).or_default() += 1;
        }
        if findings.is_empty() {
            missed.push(id);
        } else {
            detected += 1;
        }
        println!(
            "  {:<32} {}",
            id,
            if markers.is_empty() {
                "MISSED".to_string()
            } else {
                markers.join(", ")
            }
        );
    }
    println!(
        "detected {detected} of {} ({:.0}%); by marker: {by_marker:?}",
        corpus.len(),
        100.0 * detected as f64 / corpus.len() as f64
    );

    // Benign descriptions.
    let mut benign: Vec<(String, Vec<Tool>)> = vec![("bfcl".into(), bfcl())];
    benign.push((
        "notes".into(),
        listed(demo_servers::NotesServer::new()).await,
    ));
    benign.push((
        "units".into(),
        listed(demo_servers::UnitsServer::new()).await,
    ));
    benign.push(("docs".into(), listed(demo_servers::DocsServer::new()).await));
    let everything = installed(test_deps().join("node/node_modules/.bin/mcp-server-everything"));
    benign.push((
        "everything".into(),
        listed_child(everything, &["stdio"]).await,
    ));
    let time = installed(test_deps().join("venv/bin/mcp-server-time"));
    benign.push(("time".into(), listed_child(time, &[]).await));
    let total: usize = benign.iter().map(|(_, t)| t.len()).sum();
    let mut flagged = Vec::new();
    for (server, tools) in &benign {
        for t in tools {
            let findings = scan_tool(&t.name, t);
            if !findings.is_empty() {
                flagged.push(format!("{server}/{}: {}", t.name, findings[0]));
            }
        }
    }
    let fp_rate = flagged.len() as f64 / total as f64;
    println!(
        "benign tools: {total} ({}); flagged by the per-tool scan: {} ({:.2}%)",
        benign
            .iter()
            .map(|(s, t)| format!("{s} {}", t.len()))
            .collect::<Vec<_>>()
            .join(", "),
        flagged.len(),
        100.0 * fp_rate
    );
    for f in &flagged {
        println!("  {f}");
    }

    // Cross-server names: each BFCL function as a server of its own (the worst case), and the
    // real servers side by side.
    let bfcl_board: Vec<BoardTool> = benign[0]
        .1
        .iter()
        .enumerate()
        .map(|(i, t)| board_tool(i, &format!("s{i}"), t))
        .collect();
    let cross = other_server_mentions(&bfcl_board);
    let mut cross_tools: Vec<&str> = cross.iter().map(|f| f.tool.as_str()).collect();
    cross_tools.sort_unstable();
    cross_tools.dedup();
    let cross_rate = cross_tools.len() as f64 / bfcl_board.len() as f64;
    println!(
        "BFCL, each function its own server: {} of {} tools name another's ({:.2}%)",
        cross_tools.len(),
        bfcl_board.len(),
        100.0 * cross_rate
    );
    for f in cross.iter().take(20) {
        println!("  {f}");
    }
    let real_board: Vec<BoardTool> = benign[1..]
        .iter()
        .enumerate()
        .flat_map(|(i, (server, tools))| tools.iter().map(move |t| board_tool(i, server, t)))
        .collect();
    let real_cross = other_server_mentions(&real_board);
    println!(
        "demo + everything + time on one board: {} cross-server findings",
        real_cross.len()
    );
    for f in &real_cross {
        println!("  {f}");
    }

    assert_eq!(
        corpus.len(),
        EXAMPLES,
        "tests/data/poisoning.json changed size: update EXAMPLES and the docs' \"of 18\""
    );
    assert_eq!(
        missed, KNOWN_MISSED,
        "the examples not flagged differ from the known ones (a regression if one was added, \
         an improvement to write into KNOWN_MISSED and the docs if one left)"
    );
    assert_eq!(detected, corpus.len() - KNOWN_MISSED.len());
    assert_eq!(
        total, BENIGN,
        "the benign corpus changed size: update BENIGN and the docs' \"of 1,875\""
    );
    assert!(
        flagged.is_empty(),
        "{} of {total} real descriptions flagged (the docs say 0; {fp_rate:.4}):\n{}",
        flagged.len(),
        flagged.join("\n")
    );
    assert_eq!(bfcl_board.len(), BFCL_FUNCTIONS);
    assert!(
        cross_tools.is_empty(),
        "{} of {} BFCL functions name another's tool (the docs say 0; {cross_rate:.4}): {cross:?}",
        cross_tools.len(),
        bfcl_board.len()
    );
    assert!(real_cross.is_empty(), "{real_cross:?}");
    // Every marker but the board-wide one is exercised by the corpus.
    for marker in Marker::ALL {
        assert!(
            by_marker.contains_key(marker.as_str()),
            "no example shows {}",
            marker.as_str()
        );
    }
}
