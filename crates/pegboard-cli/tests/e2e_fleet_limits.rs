//! Issue 34 item 3: a client's limits counted in the store, across replicas, with the meaning
//! they have on one replica. Three `pegboard serve --http --store URL` replicas share one real
//! redis-server (Debian's, started by the test): `callsPerMinute: 30` lets 30 calls through
//! in a burst across the three, not 90, on the express lane and on rmcp's way; `maxConcurrent`
//! and `maxSessions` count the fleet's calls and sessions; the place of a call on a replica
//! killed mid-call expires; with the store down, a limited client's call is answered 503 with
//! Retry-After while a client without limits is served as ever.
//!
//! Needs the `store` and `testing` features (`required-features` in Cargo.toml).

mod common;

use std::time::Duration;

use anyhow::{Context, Result};
use common::fleet::{Replica, Session};
use demo_servers::testing::redis::RedisServer;
use serde_json::json;

const CI: &str = "ci-token-0123456789abcdef";
const FREE: &str = "free-token-0123456789abcdef";
/// How long a test waits for something that must happen.
const WAIT: Duration = Duration::from_secs(45);
/// The trace of every call the express lane carries (counted to tell the two ways apart).
const LOG: &str = "warn,pegboard_gateway::express=trace";
/// The client `ci`'s calls in progress, in the store (the default prefix).
const CI_CALLS: &str = "pegboard:limits:ci:calls";

/// A config of the test server with the client `ci` (its `limits`) and `free` (none).
fn config(dir: &std::path::Path, limits: serde_json::Value) -> Result<std::path::PathBuf> {
    let mut ci = json!({ "token": "${CI_TOKEN}" });
    for (k, v) in limits.as_object().context("limits")? {
        ci[k] = v.clone();
    }
    let config = json!({
        "mcpServers": { "test": common::demo_server("test", &[]) },
        "clients": { "ci": ci, "free": { "token": "${FREE_TOKEN}" } }
    });
    let path = dir.join("pegboard.json");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

const ENV: [(&str, &str); 3] = [("CI_TOKEN", CI), ("FREE_TOKEN", FREE), ("RUST_LOG", LOG)];

/// `n` replicas of `config` on `store`, with `extra` arguments.
async fn replicas(
    n: usize,
    config: &std::path::Path,
    store: &str,
    extra: &[&str],
) -> Result<Vec<Replica>> {
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        all.push(Replica::start(config, store, extra, &ENV).await?);
    }
    Ok(all)
}

fn lane_calls(replicas: &[Replica]) -> usize {
    replicas
        .iter()
        .map(|r| common::count_lines(&r.log.borrow(), "express call"))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_per_minute_30_lets_30_through_in_a_burst_across_three_replicas() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({ "callsPerMinute": 30 }))?;
    // Each way on its own database: the lane (the default), then rmcp's way alone.
    for (db, extra) in [(0u8, &[][..]), (1, &["--no-express"][..])] {
        let fleet = replicas(3, &config, &redis.url(db), extra).await?;
        let mut sessions = Vec::new();
        for replica in &fleet {
            sessions.push(Session::open(&replica.url, Some(CI)).await?);
        }
        let (mut passed, mut refused) = (0, 0);
        // 45 calls, round robin over the three: one replica alone would let 30 through.
        for i in 0..45 {
            let answer = sessions[i % 3]
                .call("test-echo", json!({ "text": "hi" }))
                .await?;
            if answer.ok() {
                passed += 1;
            } else {
                let said = answer.said();
                assert!(
                    said.contains("callsPerMinute") && said.contains("client `ci`"),
                    "{extra:?}: call {i}: {said}"
                );
                refused += 1;
            }
        }
        assert_eq!(
            (passed, refused),
            (30, 15),
            "{extra:?}: the fleet lets through what one replica would"
        );
        // The client without limits is not counted, and not refused.
        let free = Session::open(&fleet[1].url, Some(FREE)).await?;
        for _ in 0..40 {
            let answer = free.call("test-echo", json!({ "text": "free" })).await?;
            assert!(answer.ok(), "{answer:?}");
        }
        let lane = lane_calls(&fleet);
        if extra.is_empty() {
            assert!(lane >= 30, "the lane carried {lane} calls");
        } else {
            assert_eq!(lane, 0, "--no-express: every call took rmcp's way");
        }
    }
    Ok(())
}

/// Call `test-sleep` for `ms` on `session` in the background: its answer when it ends.
fn sleep_call(
    session: std::sync::Arc<Session>,
    ms: u64,
) -> tokio::task::JoinHandle<Result<common::fleet::Answer>> {
    tokio::spawn(async move { session.call("test-sleep", json!({ "ms": ms })).await })
}

/// Call `test-echo` on `session` until an answer satisfies `done` (within [`WAIT`]): that
/// answer. For what another process does in its own time (a call reaching its server, a
/// lease expiring), which the test can only observe through answers.
async fn echo_until(
    session: &Session,
    done: impl Fn(&common::fleet::Answer) -> bool,
) -> Result<common::fleet::Answer> {
    let last = std::sync::Mutex::new(None);
    let found = tokio::time::timeout(WAIT, async {
        loop {
            let answer = session.call("test-echo", json!({ "text": "x" })).await?;
            if done(&answer) {
                return anyhow::Ok(answer);
            }
            *last.lock().unwrap() = Some(answer);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    found.with_context(|| {
        format!(
            "no such answer in time; the last: {:?}",
            last.lock().unwrap()
        )
    })?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrent_counts_the_calls_of_every_replica_on_both_ways() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({ "maxConcurrent": 1 }))?;
    for (db, extra) in [(0u8, &[][..]), (1, &["--no-express"][..])] {
        let fleet = replicas(2, &config, &redis.url(db), extra).await?;
        let a = std::sync::Arc::new(Session::open(&fleet[0].url, Some(CI)).await?);
        let b = Session::open(&fleet[1].url, Some(CI)).await?;
        // A plain call first: the tool answers plainly, so the next calls may take the lane.
        assert!(b.call("test-echo", json!({ "text": "x" })).await?.ok());
        let long = sleep_call(std::sync::Arc::clone(&a), 4000);
        // Once A's call holds the fleet's one place (seen in the store), B, which runs
        // nothing, is refused.
        common::fleet::until_zcard(redis.port(), db, CI_CALLS, 1).await?;
        let refused = b.call("test-echo", json!({ "text": "x" })).await?;
        let said = refused.said();
        assert!(
            said.contains("maxConcurrent") && said.contains("client `ci`"),
            "{said}"
        );
        assert!(!long.is_finished(), "refused only while the long call ran");
        let long = long.await??;
        assert!(long.ok(), "the long call itself succeeded: {long:?}");
        // Its place is given back before its answer goes out: B is admitted at once.
        let admitted = b.call("test-echo", json!({ "text": "x" })).await?;
        assert!(admitted.ok(), "{admitted:?}");
        assert_eq!(common::fleet::zcard(redis.port(), db, CI_CALLS).await?, 0);
        // `free` has no limit: never refused, whatever `ci` holds.
        let free = Session::open(&fleet[1].url, Some(FREE)).await?;
        let held = sleep_call(std::sync::Arc::clone(&a), 1500);
        for _ in 0..5 {
            assert!(free.call("test-echo", json!({ "text": "f" })).await?.ok());
        }
        let held = held.await??;
        assert!(held.ok(), "{held:?}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_place_of_a_call_on_a_killed_replica_expires() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({ "maxConcurrent": 1 }))?;
    let mut fleet = replicas(2, &config, &redis.url(0), &[]).await?;
    let a = std::sync::Arc::new(Session::open(&fleet[0].url, Some(CI)).await?);
    let b = Session::open(&fleet[1].url, Some(CI)).await?;
    let _long = sleep_call(a, 600_000);
    common::fleet::until_zcard(redis.port(), 0, CI_CALLS, 1).await?;
    let refused = b.call("test-echo", json!({ "text": "x" })).await?;
    assert!(
        refused.said().contains("maxConcurrent"),
        "{}",
        refused.said()
    );
    // Killed mid-call: it gives nothing back. Its lease is no longer renewed and expires
    // (15 s), and B is admitted again: no count leaks.
    let killed = std::time::Instant::now();
    fleet[0].kill().await?;
    let admitted = echo_until(&b, common::fleet::Answer::ok).await?;
    assert!(admitted.ok());
    let after = killed.elapsed();
    assert!(
        after < Duration::from_secs(16) + Duration::from_secs(5),
        "the lease outlived its TTL: {after:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_sessions_counts_the_sessions_of_every_replica() -> Result<()> {
    let redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({ "maxSessions": 2 }))?;
    let fleet = replicas(3, &config, &redis.url(0), &[]).await?;
    let first = Session::open(&fleet[0].url, Some(CI)).await?;
    let _second = Session::open(&fleet[1].url, Some(CI)).await?;
    // The third, on the replica that holds none: the fleet holds the client's two, and this
    // replica has no idle one of the client to give up. Refused as on one replica whose
    // sessions are busy: 429 naming the limit, with Retry-After.
    let refused = match Session::try_open(&fleet[2].url, Some(CI)).await? {
        Ok(_) => anyhow::bail!("a third session was opened beside the fleet's two"),
        Err(refused) => refused,
    };
    assert_eq!(refused.status, 429, "{refused:?}");
    assert!(refused.retry_after.is_some(), "{refused:?}");
    assert!(
        refused.text.contains("`maxSessions`") && refused.text.contains("client `ci`"),
        "{refused:?}"
    );
    // On the replica that holds an idle one, that one makes room, as on one replica.
    let third = Session::open(&fleet[0].url, Some(CI)).await?;
    assert!(third.call("test-echo", json!({ "text": "x" })).await?.ok());
    let gone = first.call("test-echo", json!({ "text": "x" })).await?;
    assert_eq!(
        gone.status, 404,
        "the idle session gave up its place: {gone:?}"
    );
    // A client without a `maxSessions` is not counted in the store.
    for replica in &fleet {
        Session::open(&replica.url, Some(FREE)).await?;
        Session::open(&replica.url, Some(FREE)).await?;
        Session::open(&replica.url, Some(FREE)).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_store_down_a_limited_call_is_503_and_an_unlimited_one_is_served() -> Result<()> {
    let mut redis = RedisServer::start().await?;
    let dir = tempfile::tempdir()?;
    let config = config(dir.path(), json!({ "callsPerMinute": 600 }))?;
    for extra in [&[][..], &["--no-express"][..]] {
        let fleet = replicas(1, &config, &redis.url(0), extra).await?;
        let ci = Session::open(&fleet[0].url, Some(CI)).await?;
        let free = Session::open(&fleet[0].url, Some(FREE)).await?;
        assert!(ci.call("test-echo", json!({ "text": "x" })).await?.ok());
        redis.kill().await?;
        let started = std::time::Instant::now();
        let refused = ci.call("test-echo", json!({ "text": "x" })).await?;
        assert_eq!(refused.status, 503, "{extra:?}: {refused:?}");
        assert_eq!(refused.retry_after.as_deref(), Some("1"), "{refused:?}");
        assert!(
            refused.text.contains("counted in the store")
                && refused.text.contains("`callsPerMinute`"),
            "{refused:?}"
        );
        // Never a hang: the store's round trip is bounded (2 s).
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        for _ in 0..5 {
            let served = free.call("test-echo", json!({ "text": "free" })).await?;
            assert!(served.ok(), "{extra:?}: {served:?}");
        }
        // The store back: the limited client is served again (it reconnects by itself).
        redis.restart().await?;
        echo_until(&ci, common::fleet::Answer::ok).await?;
    }
    Ok(())
}
