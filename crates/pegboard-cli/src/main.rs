//! `pegboard`: one MCP endpoint for all the servers of your `mcpServers` config.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod cli;
mod clients;
mod commands;
mod config_edit;
mod edit_error;
mod output;
mod registry;
mod safe_write;

use pegboard_gateway::config;

use std::io::{IsTerminal, Write};
use std::time::Duration;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, Command};
use pegboard_gateway::Progress;

/// The async runtime a command runs on. `TOKIO_WORKER_THREADS`, when set, asks for a
/// multi-threaded one with that many workers, whatever the command.
///
/// The gateway's own work per call is a few µs; with the servers and clients on the same cores,
/// one thread answers sooner than two handing each call back and forth (pegboard-load, units
/// backend, 2 cores). Over stdio, one worker beside the thread that reads stdin: +34 µs per
/// call instead of +42 with two workers, 0.99× direct at 16 in flight instead of 0.84×. Over
/// HTTP, where nothing blocks, everything on the one thread: +22 to +29 µs instead of +33 to
/// +36 with one worker, 0.64× direct at 16 in flight instead of 0.45×.
fn runtime_for(command: &Command) -> tokio::runtime::Builder {
    let chosen = std::env::var_os("TOKIO_WORKER_THREADS").is_some();
    match command {
        Command::Serve(args) if args.http.is_some() && !chosen => {
            tokio::runtime::Builder::new_current_thread()
        }
        Command::Serve(_) if !chosen => {
            let mut runtime = tokio::runtime::Builder::new_multi_thread();
            runtime.worker_threads(1);
            runtime
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
}

fn main() {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let progress = if cli.quiet {
        Progress::Quiet
    } else {
        Progress::Stderr
    };
    let mut runtime = runtime_for(&cli.command);
    let runtime = match runtime.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(async move {
        let result = match cli.command {
            Command::Serve(args) => commands::serve::run(*args, progress).await,
            Command::Tools(args) => commands::tools::run(args, progress).await,
            Command::Search(args) => commands::search::run(args, progress).await,
            Command::Call(args) => commands::call::run(args, progress).await,
            Command::Pin(args) => commands::pin::run(args, progress).await,
            Command::Login(args) => commands::login::run(args).await,
            Command::Logout(args) => commands::login::logout(args).await,
            Command::Auth(args) => commands::auth::run(args).await,
            Command::Demo(args) => commands::demo::run(args, progress).await,
            Command::Status(args) => commands::status::run(args).await,
            Command::DemoServer(args) => commands::demo::serve_one(args).await,
            Command::Add(args) => commands::add::run(*args).await,
            Command::Remove(args) => commands::servers::remove(&args),
            Command::Enable(args) => commands::servers::set_disabled(&args, false),
            Command::Disable(args) => commands::servers::set_disabled(&args, true),
            Command::Find(args) => commands::find::run(args).await,
            Command::Secret(args) => commands::secret::run(args),
            Command::Clients(args) => commands::clients::run(args),
            Command::Import(args) => commands::import::run(args),
            Command::Connect(args) => commands::connect::run(args),
            Command::Disconnect(args) => commands::disconnect::run(args),
        };
        match result {
            Ok(code) => code,
            Err(e) => {
                // Not `eprintln!`: with stderr closed it panics, and the exit code would say so
                // instead of 1.
                let _ = writeln!(std::io::stderr(), "error: {}", render_error(&e));
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
        // rmcp's OAuth code logs the authorization code at debug: not even that goes out.
        2 => "debug,rmcp::transport::auth=info",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(verbose > 0)
        .with_ansi(std::io::stderr().is_terminal())
        // With stderr closed (a supervisor's log pipe gone), a log line is dropped; reporting
        // that on stderr would panic the task that logged, e.g. the one stopping on SIGTERM.
        .log_internal_errors(false)
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
