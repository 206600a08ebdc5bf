//! The fleet's counters against a real redis-server (Debian's, started per test): several
//! `FleetLimits` on one store stand for several replicas.

use std::num::NonZeroU32;
use std::time::Duration;

use demo_servers::testing::redis::RedisServer;

use super::*;
use crate::config::{StoreSettings, StoreUrl};

fn store(url: &str) -> Store {
    let url: StoreUrl = url.parse().expect("a store URL");
    Store::open(&StoreSettings::new(url), None).expect("the store")
}

fn rate(n: u32) -> CallLimits {
    CallLimits {
        per_minute: NonZeroU32::new(n),
        concurrent: None,
    }
}

fn concurrent(n: usize) -> CallLimits {
    CallLimits {
        per_minute: None,
        concurrent: Some(n),
    }
}

#[tokio::test]
async fn a_minutes_calls_pass_at_once_across_replicas_then_one_per_interval() {
    let redis = RedisServer::start().await.unwrap();
    let replicas: Vec<FleetLimits> = (0..3)
        .map(|_| FleetLimits::new(store(&redis.url(0))))
        .collect();
    let mut passed = 0;
    let mut waits = Vec::new();
    for i in 0..45 {
        match replicas[i % 3].admit("ci", rate(30)).await {
            Ok(_) => passed += 1,
            Err(LimitError::Rate {
                limit, retry_after, ..
            }) => {
                assert_eq!(limit, 30);
                waits.push(retry_after);
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(passed, 30, "30 in a burst, as one replica");
    // As `governor` says on one replica: the next call in 60 s / 30 = 2 s (less the time the
    // burst took).
    for wait in waits {
        assert!(
            wait <= Duration::from_secs(2) && wait > Duration::from_millis(1500),
            "{wait:?}"
        );
    }
    // Another client has its own count.
    let _other = replicas[0].admit("other", rate(30)).await.unwrap();
}

#[tokio::test]
async fn concurrent_calls_are_counted_across_replicas_and_given_back() {
    let redis = RedisServer::start().await.unwrap();
    let (a, b) = (
        FleetLimits::new(store(&redis.url(0))),
        FleetLimits::new(store(&redis.url(0))),
    );
    let first = a.admit("ci", concurrent(2)).await.unwrap();
    let _second = b.admit("ci", concurrent(2)).await.unwrap();
    let refused = a.admit("ci", concurrent(2)).await.unwrap_err();
    assert_eq!(
        refused,
        LimitError::Concurrency {
            client: "ci".into(),
            limit: 2
        }
    );
    assert_eq!(a.leases.count(), 1, "a holds its one lease");
    drop(first);
    // Given back off the call's path (its own task): admitted once that has landed.
    let admitted = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(permit) = b.admit("ci", concurrent(2)).await {
                return permit;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the place given back");
    drop(admitted);
}

#[test]
fn the_place_of_a_replica_that_dies_expires() {
    let redis = tokio::runtime::Runtime::new().unwrap();
    let server = redis.block_on(RedisServer::start()).unwrap();
    let url = server.url(0);
    // The replica that dies: its own runtime, shut down with a call's place held and never
    // given back (its renewing task ends with it).
    let dying = tokio::runtime::Runtime::new().unwrap();
    dying.block_on(async {
        let limits = FleetLimits::with_lease_ttl(store(&url), Duration::from_millis(600));
        let permit = limits.admit("ci", concurrent(1)).await.unwrap();
        std::mem::forget(permit);
    });
    dying.shutdown_background();
    redis.block_on(async {
        let alive = FleetLimits::with_lease_ttl(store(&url), Duration::from_millis(600));
        assert!(matches!(
            alive.admit("ci", concurrent(1)).await,
            Err(LimitError::Concurrency { .. })
        ));
        let permit = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let Ok(permit) = alive.admit("ci", concurrent(1)).await {
                    return permit;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        // Within 10 s: the lease's own TTL (600 ms), not the default (15 s), freed it.
        .expect("the dead replica's lease expired");
        // A live replica's lease outlives its TTL: it is renewed. Seen in the store, not timed
        // here: the store's clock passes the expiry the lease was first given while the place
        // is still held, its expiry moved on.
        let store = store(&url);
        let key = format!("{}:limits:ci:calls", store.prefix());
        let mut connection = store.connection();
        let first = expiry(&mut connection, &key).await;
        tokio::time::timeout(Duration::from_secs(10), async {
            while store_ms(&mut connection).await <= first {
                // A poll of the store's clock, not a wait that must be long enough.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the store's clock moves");
        assert!(expiry(&mut connection, &key).await > first, "renewed");
        assert!(matches!(
            alive.admit("ci", concurrent(1)).await,
            Err(LimitError::Concurrency { .. })
        ));
        drop(permit);
    });
    drop(server);
}

#[tokio::test]
async fn a_call_refused_for_concurrency_spends_no_rate() {
    let redis = RedisServer::start().await.unwrap();
    let limits = FleetLimits::new(store(&redis.url(0)));
    let both = CallLimits {
        per_minute: NonZeroU32::new(2),
        concurrent: Some(1),
    };
    let held = limits.admit("ci", both).await.unwrap();
    for _ in 0..5 {
        assert!(matches!(
            limits.admit("ci", both).await,
            Err(LimitError::Concurrency { .. })
        ));
    }
    drop(held);
    let second = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match limits.admit("ci", both).await {
                Ok(permit) => return permit,
                Err(LimitError::Concurrency { .. }) => tokio::task::yield_now().await,
                Err(other) => panic!("{other}"),
            }
        }
    })
    .await
    .expect("admitted again");
    drop(second);
}

#[tokio::test]
async fn sessions_are_counted_across_replicas_and_a_replaced_one_gives_its_place() {
    let redis = RedisServer::start().await.unwrap();
    let (a, b) = (
        FleetLimits::new(store(&redis.url(0))),
        FleetLimits::new(store(&redis.url(0))),
    );
    let one = a.reserve("ci", 2, None, None).await.unwrap();
    let _two = b.reserve("ci", 2, None, None).await.unwrap();
    let refused = b.reserve("ci", 2, None, None).await.unwrap_err();
    assert!(matches!(
        refused,
        LimitError::ClientSessions { limit: 2, .. }
    ));
    // `one` closed to make room: its place goes in the same step as the new one is taken.
    let _three = a.reserve("ci", 2, Some(one), None).await.unwrap();
    assert!(b.reserve("ci", 2, None, None).await.is_err());
}

#[tokio::test]
async fn a_store_that_cannot_be_reached_refuses_at_once_and_counts_the_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let store = store(&format!("redis://127.0.0.1:{port}/0"));
    let limits = FleetLimits::new(store.clone());
    let started = std::time::Instant::now();
    let refused = limits.admit("ci", rate(30)).await.unwrap_err();
    let LimitError::Unavailable {
        client,
        limits: which,
        retry_after,
        ..
    } = &refused
    else {
        panic!("{refused}");
    };
    assert_eq!((client.as_str(), *which), ("ci", "`callsPerMinute`"));
    assert_eq!(*retry_after, Duration::from_secs(1));
    assert!(refused.to_string().contains("retry in 1 s"), "{refused}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        store.errors() >= 1,
        "counted in pegboard_store_errors_total"
    );
    assert!(matches!(
        limits.reserve("ci", 2, None, None).await,
        Err(LimitError::Unavailable { .. })
    ));
}

#[tokio::test]
async fn a_session_taken_over_by_another_replica_keeps_its_one_place() {
    let redis = RedisServer::start().await.unwrap();
    let (a, b) = (
        FleetLimits::new(store(&redis.url(0))),
        FleetLimits::new(store(&redis.url(0))),
    );
    // Opened on A and named by its id: the client's one place.
    let on_a = a.reserve("ci", 1, None, None).await.unwrap();
    let on_a = on_a.named("session-1").await;
    assert!(matches!(
        b.reserve("ci", 1, None, None).await,
        Err(LimitError::ClientSessions { limit: 1, .. })
    ));
    // B takes the session over (A died, say): it keeps that place, and takes no other.
    let on_b = b.reserve("ci", 1, None, Some("session-1")).await.unwrap();
    assert!(b.reserve("ci", 1, None, None).await.is_err());
    std::mem::forget(on_a);
    drop(on_b);
}

#[tokio::test]
async fn a_huge_calls_per_minute_is_still_counted() {
    let redis = RedisServer::start().await.unwrap();
    let limits = FleetLimits::new(store(&redis.url(0)));
    // 4,000,000,000 a minute: 15 ns apart, counted as 1 µs apart; never refused in a burst,
    // and the rate's key is written (it is counted, not taken for "no rate").
    for _ in 0..100 {
        let _ = limits.admit("ci", rate(4_000_000_000)).await.unwrap();
    }
    let mut connection = limits.store.connection();
    let tat: Option<u64> = redis::cmd("GET")
        .arg(limits.store.key("limits", "ci:rate"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(tat.is_some(), "the rate was counted");
}

/// The latest expiry (ms on the store's clock) among the leases of the sorted set `key`.
async fn expiry(connection: &mut redis::aio::ConnectionManager, key: &str) -> i64 {
    let top: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg(key)
        .arg(-1)
        .arg(-1)
        .arg("WITHSCORES")
        .query_async(connection)
        .await
        .expect("ZRANGE");
    top.first().map_or(0, |(_, score)| *score as i64)
}

/// The store's clock, in ms.
async fn store_ms(connection: &mut redis::aio::ConnectionManager) -> i64 {
    let (secs, micros): (i64, i64) = redis::cmd("TIME")
        .query_async(connection)
        .await
        .expect("TIME");
    secs * 1000 + micros / 1000
}
