//! `pegboard`: one MCP endpoint for all the servers of your `mcpServers` config.

mod cli;
mod commands;
mod output;

use pegboard_gateway::{config, connect, http, reload};

use std::io::IsTerminal;
use std::time::Duration;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, Command};
use crate::connect::Progress;

fn main() {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let progress = if cli.quiet {
        Progress::Quiet
    } else {
        Progress::Stderr
    };
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    // The gateway's own work per call is a few µs; with the servers and clients on the same
    // cores, one worker thread answers sooner than two handing each call back and forth
    // (pegboard-load, units backend, 2 cores: stdio +34 µs per call instead of +42 and 0.99×
    // direct at 16 in flight instead of 0.84×; HTTP +69 µs instead of +103, 0.60× at 16 instead
    // of 0.52×, 0.71× at 64 instead of 0.46×). `TOKIO_WORKER_THREADS` still decides when set.
    if matches!(&cli.command, Command::Serve(_))
        && std::env::var_os("TOKIO_WORKER_THREADS").is_none()
    {
        runtime.worker_threads(1);
    }
    let runtime = match runtime.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(async move {
        let result = match cli.command {
            Command::Serve(args) => commands::serve::run(args, progress).await,
            Command::Tools(args) => commands::tools::run(args, progress).await,
            Command::Search(args) => commands::search::run(args, progress).await,
            Command::Call(args) => commands::call::run(args, progress).await,
            Command::Demo(args) => commands::demo::run(args, progress).await,
            Command::DemoServer(args) => commands::demo::serve_one(args).await,
        };
        match result {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {}", render_error(&e));
                1
            }
        }
    });
    // A blocking read of stdin (stdio mode) cannot be cancelled: do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(500));
    std::process::exit(code);
}

/// Logs go to stderr, never stdout (stdout is the MCP channel in stdio mode).
fn init_logging(verbose: u8) {
    let default = match verbose {
        // rmcp's worker logs a connection failure as ERROR; pegboard reports it better itself.
        0 => {
            "warn,pegboard=info,pegboard_cli=info,pegboard_gateway=info,rmcp::transport::worker=off"
        }
        1 => {
            "warn,pegboard=debug,pegboard_cli=debug,pegboard_gateway=debug,pegboard::server_stderr=debug"
        }
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(verbose > 0)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// `e` and its causes joined by ": ", leaving out a cause that the text so far already quotes
/// (pegboard's and rmcp's errors often repeat their source in their own message).
fn render_error(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::render_error;

    /// An error that quotes its source in its own message.
    #[derive(Debug)]
    struct Quoting(std::io::Error);

    impl std::fmt::Display for Quoting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "server `big` could not run `big-huge`: {}", self.0)
        }
    }

    impl std::error::Error for Quoting {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_quoted_is_not_repeated() {
        let e = anyhow::Error::new(Quoting(std::io::Error::other("too big")));
        assert_eq!(
            render_error(&e),
            "server `big` could not run `big-huge`: too big"
        );
        let e = anyhow::Error::new(std::io::Error::other("inner")).context("outer");
        assert_eq!(render_error(&e), "outer: inner");
    }
}
