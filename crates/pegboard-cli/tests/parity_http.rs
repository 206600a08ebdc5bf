//! Parity over streamable HTTP (issue 20): the same calls through `pegboard serve --http` with
//! the express lane and with `--no-express`, every tool called twice so the lane really
//! carries the second call (its trace log says so), and the client must see the same thing on
//! every path. A raw HTTP client with no standalone GET stream, so a request of the server's
//! during a call reaches it only on the call's own stream. The gateways start once for this
//! file (see `common::parity`); the scenarios are in `common/parity/`.

mod common;

use anyhow::Result;
use common::parity::{Front, block_on, checks, connection, scenarios};

#[test]
fn progress_arrives_whole_in_order_under_the_clients_token_on_both_paths() -> Result<()> {
    block_on(scenarios::progress(Front::Http))
}

#[test]
fn a_cancelled_call_is_cancelled_upstream_and_unanswered_on_both_paths() -> Result<()> {
    block_on(scenarios::cancel(Front::Http))
}

#[test]
fn a_dropped_connection_does_not_cancel_the_call_on_both_paths() -> Result<()> {
    block_on(connection::dropped_connection())
}

#[test]
fn a_deleted_session_cancels_its_calls_at_once_on_both_paths() -> Result<()> {
    block_on(connection::deleted_session())
}

#[test]
fn sampling_elicitation_and_roots_arrive_on_the_calls_own_stream_on_both_paths() -> Result<()> {
    block_on(scenarios::server_requests(Front::Http))
}

#[test]
fn the_servers_requests_during_a_call_carry_the_same_meta_on_both_paths() -> Result<()> {
    block_on(scenarios::server_request_meta(Front::Http))
}

#[test]
fn a_call_past_its_servers_timeout_fails_the_same_on_both_paths() -> Result<()> {
    block_on(scenarios::timeout(Front::Http))
}

#[test]
fn the_clients_meta_reaches_the_server_without_its_session_keys_on_both_paths() -> Result<()> {
    block_on(scenarios::meta(Front::Http))
}

/// The test that fails if a check is skipped on one path (see `common/parity/checks.rs`).
#[test]
fn a_result_rmcp_refuses_is_refused_on_the_lane_too() -> Result<()> {
    block_on(checks::malformed_results(Front::Http))
}

#[test]
fn a_legacy_client_gets_no_result_type_on_either_path() -> Result<()> {
    block_on(checks::legacy_results(Front::Http))
}

/// The test that fails if a check is skipped on one path (see `common/parity/checks.rs`).
#[test]
fn progress_that_does_not_increase_is_dropped_on_both_paths() -> Result<()> {
    block_on(checks::progress_gate(Front::Http))
}
