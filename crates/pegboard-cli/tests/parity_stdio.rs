//! Parity over stdio (issue 20): the same calls through `pegboard serve` with the express lane
//! and with `--no-express`, every tool called twice so the lane really carries the second call
//! (its trace log says so), and the client must see the same thing on every path. A raw
//! JSON-RPC client on the gateway's stdin and stdout, so the test sees exactly what a client
//! gets. The gateways start once for this file (see `common::parity`); the scenarios are in
//! `common/parity/`.

mod common;

use anyhow::Result;
use common::parity::{Front, block_on, checks, scenarios};

#[test]
fn progress_arrives_whole_in_order_under_the_clients_token_on_both_paths() -> Result<()> {
    block_on(scenarios::progress(Front::Stdio))
}

#[test]
fn a_cancelled_call_is_cancelled_upstream_and_unanswered_on_both_paths() -> Result<()> {
    block_on(scenarios::cancel(Front::Stdio))
}

#[test]
fn sampling_elicitation_and_roots_during_a_call_reach_the_client_on_both_paths() -> Result<()> {
    block_on(scenarios::server_requests(Front::Stdio))
}

#[test]
fn the_servers_requests_during_a_call_carry_the_same_meta_on_both_paths() -> Result<()> {
    block_on(scenarios::server_request_meta(Front::Stdio))
}

#[test]
fn a_call_past_its_servers_timeout_fails_the_same_on_both_paths() -> Result<()> {
    block_on(scenarios::timeout(Front::Stdio))
}

#[test]
fn the_clients_meta_reaches_the_server_without_its_session_keys_on_both_paths() -> Result<()> {
    block_on(scenarios::meta(Front::Stdio))
}

/// The test that fails if a check is skipped on one path (see `common/parity/checks.rs`).
#[test]
fn a_result_rmcp_refuses_is_refused_on_the_lane_too() -> Result<()> {
    block_on(checks::malformed_results(Front::Stdio))
}

#[test]
fn a_legacy_client_gets_no_result_type_on_either_path() -> Result<()> {
    block_on(checks::legacy_results(Front::Stdio))
}

/// The test that fails if a check is skipped on one path (see `common/parity/checks.rs`).
#[test]
fn progress_that_does_not_increase_is_dropped_on_both_paths() -> Result<()> {
    block_on(checks::progress_gate(Front::Stdio))
}
