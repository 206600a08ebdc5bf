//! Code mode for the PegBoard gateway: the model writes one JavaScript program that calls many
//! tools, and the gateway runs it in a sandbox and returns only what it returns.
//!
//! - [`run`] runs a script (the body of an async function) on a fresh QuickJS runtime and
//!   context on a thread of its own, with its tools reachable as `tools.<ns>.<name>(args)` and
//!   `call("<board name>", args)`, each call made through a [`ToolHost`] (the gateway's call
//!   pipeline), at most `maxParallel` at once. Limits ([`Limits`]): wall time (an interrupt
//!   handler while code runs, the host's deadline while it awaits), heap, stack, calls, output.
//!   The script reaches nothing else: no file system, network, environment, process, timers
//!   or modules (QuickJS's `std`/`os` modules and the module loader are not in the build).
//! - [`declarations::render`] writes TypeScript declarations of tools for the model.
//!
//! The sandbox (`run`, QuickJS) is the `engine` feature (on by default); without it the crate is
//! the pure-Rust rest, with nothing of QuickJS built.

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod declarations;
#[cfg(feature = "engine")]
mod engine;
mod host;
mod limits;
pub mod names;
mod outcome;
#[cfg(feature = "engine")]
mod run;

pub use host::{CallFuture, CallRecord, DoneFuture, ToolHost, ToolReply};
pub use limits::Limits;
pub use names::ToolEntry;
pub use outcome::{Position, RunError, RunOutcome};
#[cfg(feature = "engine")]
pub use run::run;
