//! Run a demo or test server by name, with its command-line flags: what the binaries do, as a
//! library function, so that other binaries (the `pegboard demo-server` command) can embed them.

#[cfg(feature = "testing")]
use std::time::Duration;

#[cfg(feature = "testing")]
use anyhow::Context as _;

use crate::{DocsServer, NotesServer, UnitsServer, serve};
#[cfg(feature = "testing")]
use crate::{TestServer, TestServerOptions};

/// The names [`run_by_name`] knows.
#[cfg(feature = "testing")]
pub const NAMES: &[&str] = &["notes", "units", "docs", "test"];
/// The names [`run_by_name`] knows.
#[cfg(not(feature = "testing"))]
pub const NAMES: &[&str] = &["notes", "units", "docs"];

/// Serve the server called `name` (`notes`, `units`, `docs` or `test`) with these flags
/// (`--http ADDR`; for `test` also `--extra-tools N`, `--page-size N`, `--hang-list`,
/// `--huge-tool`, `--huge-list BYTES`), until its client goes away.
///
/// # Errors
/// An unknown name or flag, or a failure to serve.
pub async fn run_by_name(name: &str, args: Vec<String>) -> anyhow::Result<()> {
    #[cfg(feature = "testing")]
    let mut args = args;
    match name {
        "notes" => {
            serve::simple_with_args(
                name,
                "in-memory notes MCP server (tools: add_note, search, list_notes)",
                args,
                NotesServer::new,
            )
            .await
        }
        "units" => {
            serve::simple_with_args(
                name,
                "unit converter MCP server (tools: convert, list_units)",
                args,
                UnitsServer::new,
            )
            .await
        }
        "docs" => {
            serve::simple_with_args(
                name,
                "bundled docs MCP server (tools: search, read)",
                args,
                DocsServer::new,
            )
            .await
        }
        #[cfg(feature = "testing")]
        "test" => run_test_server(&mut args).await,
        other => anyhow::bail!(
            "unknown demo server {other:?}; choose one of {}",
            NAMES.join(", ")
        ),
    }
}

#[cfg(feature = "testing")]
/// Usage of the test server.
pub const USAGE: &str = "pegboard-test-server: configurable MCP server for PegBoard liveness tests

USAGE:
    pegboard-test-server [OPTIONS]

OPTIONS:
    --http IP:PORT     serve streamable HTTP at http://IP:PORT/mcp instead of stdio
    --extra-tools N    add N extra tools tool_0000.. (each echoes its name)
    --page-size N      tools/list page size (0 = everything in one page; default 0)
    --hang-list        never answer tools/list
    --huge-tool        add a tool `huge {bytes}` answering with a text of that many bytes
    --huge-list BYTES  add a tool `huge_listing` whose description is BYTES long
    --only-2026        speak only protocol 2026-07-28 (server/discover; refuse initialize)
    --ask-tool         add a tool `ask {via, rounds?, question?}` (and an `ask` prompt and
                       `test://ask/{via}` resources) that asks the client for input: sampling,
                       elicitation or roots, with input_required for 2026-07-28 clients and
                       with requests during the call for older ones
    --parity-tools     add the tools of the gateway's parity suites: `echo_meta {}` (answers
                       with the request's _meta), `progress {values, total?}` (sends those
                       progress values in order) and `malformed {shape}` (answers with an
                       invalid tool result: empty, unknown-content, content-not-array; or
                       valid; over stdio only)
    --vendor-tools     list three more tools whose definitions carry members rmcp does not
                       model (a vendor's own `x-vendor`, `execution`), beside icons, _meta,
                       annotations and an outputSchema (over stdio only; listed, not callable)
    -h, --help         print this help

ENVIRONMENT:
    PEGBOARD_TEST_EXIT_AFTER_MS=N   exit on its own (code 4) after N ms
    RUST_LOG                        log filter (logs go to stderr; default warn)

TOOLS: echo {text}, sleep {ms}, crash {} (exits with code 3), add_tool {name},
       remove_tool {name}, pid {}";

#[cfg(feature = "testing")]
fn take_number(args: &mut Vec<String>, flag: &str) -> anyhow::Result<Option<usize>> {
    let prefix = format!("{flag}=");
    let Some(i) = args
        .iter()
        .position(|a| a == flag || a.starts_with(&prefix))
    else {
        return Ok(None);
    };
    let raw = if args[i] == flag {
        if i + 1 >= args.len() {
            anyhow::bail!("{flag} needs a number");
        }
        let v = args.remove(i + 1);
        args.remove(i);
        v
    } else {
        let v = args[i][prefix.len()..].to_string();
        args.remove(i);
        v
    };
    raw.parse()
        .map(Some)
        .with_context(|| format!("{flag}: not a number: {raw:?}"))
}

#[cfg(feature = "testing")]
async fn run_test_server(args: &mut Vec<String>) -> anyhow::Result<()> {
    let mut args = std::mem::take(args);
    if serve::wants_help(&args) {
        eprintln!("{USAGE}");
        return Ok(());
    }
    let mode = serve::take_mode(&mut args)?;
    let mut options = TestServerOptions {
        exit_on_crash: true,
        ..TestServerOptions::default()
    };
    if let Some(n) = take_number(&mut args, "--extra-tools")? {
        options.extra_tools = n;
    }
    if let Some(n) = take_number(&mut args, "--page-size")? {
        options.page_size = n;
    }
    if let Some(i) = args.iter().position(|a| a == "--hang-list") {
        args.remove(i);
        options.hang_list = true;
    }
    if let Some(i) = args.iter().position(|a| a == "--huge-tool") {
        args.remove(i);
        options.huge_tool = true;
    }
    if let Some(n) = take_number(&mut args, "--huge-list")? {
        options.huge_list = n;
    }
    if let Some(i) = args.iter().position(|a| a == "--only-2026") {
        args.remove(i);
        options.only_2026 = true;
    }
    if let Some(i) = args.iter().position(|a| a == "--ask-tool") {
        args.remove(i);
        options.ask_tool = true;
    }
    if let Some(i) = args.iter().position(|a| a == "--parity-tools") {
        args.remove(i);
        options.parity_tools = true;
    }
    if let Some(i) = args.iter().position(|a| a == "--vendor-tools") {
        args.remove(i);
        options.vendor_tools = true;
    }
    if let Some(extra) = args.first() {
        anyhow::bail!("unexpected argument {extra:?} (see --help)");
    }
    serve::init_logging();

    if let Ok(raw) = std::env::var("PEGBOARD_TEST_EXIT_AFTER_MS") {
        let ms: u64 = raw
            .trim()
            .parse()
            .with_context(|| format!("PEGBOARD_TEST_EXIT_AFTER_MS: not a number: {raw:?}"))?;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            tracing::warn!(
                ms,
                "PEGBOARD_TEST_EXIT_AFTER_MS elapsed: exiting with code 4"
            );
            std::process::exit(4);
        });
    }

    tracing::info!(?options, "starting pegboard-test-server");
    let server = TestServer::new(options);
    match mode {
        // Over stdio the `malformed` tool can answer as asked (see `testing::Faults`).
        serve::Mode::Stdio => serve::serve_stdio(crate::testing::Faults(server)).await,
        serve::Mode::Http(addr) => serve::serve_http(server, addr).await,
    }
}
