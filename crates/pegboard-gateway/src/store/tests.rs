//! The store's handle against a real redis-server (`demo_servers::testing::redis`).

use super::*;
use demo_servers::testing::redis::RedisServer;
use redis::AsyncCommands;

fn settings(url: &str) -> StoreSettings {
    StoreSettings::new(url.parse().unwrap())
}

#[tokio::test]
async fn keys_are_prefixed_and_round_trips_reach_the_store() {
    let redis = RedisServer::start().await.unwrap();
    let mut s = settings(&redis.url(3));
    s.prefix = "team-a".into();
    let store = Store::open(&s, None).unwrap();
    assert_eq!(store.prefix(), "team-a");
    assert_eq!(store.key("session", "abc"), "team-a:session:abc");
    store.ping().await.unwrap();
    let mut c = store.connection();
    let key = store.key("probe", "1");
    let value: Option<String> = store
        .round_trip("writing a probe", async {
            c.set::<_, _, ()>(&key, "x").await?;
            c.get(&key).await
        })
        .await
        .unwrap();
    assert_eq!(value.as_deref(), Some("x"));
    assert_eq!(store.errors(), 0);
}

#[tokio::test]
async fn a_store_that_is_down_fails_in_bounded_time_counts_it_and_comes_back_by_itself() {
    let mut redis = RedisServer::start().await.unwrap();
    let errors = Arc::new(AtomicU64::new(0));
    let store = Store::open(&settings(&redis.url(0)), Some(Arc::clone(&errors))).unwrap();
    store.ping().await.unwrap();
    redis.kill().await.unwrap();
    let started = std::time::Instant::now();
    let err = store.ping().await.unwrap_err();
    assert!(
        started.elapsed() <= ROUND_TRIP + Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    assert!(err.to_string().contains("reconnects by itself"), "{err}");
    assert!(!err.to_string().contains("pw"), "{err}");
    assert!(errors.load(Ordering::Relaxed) >= 1);
    assert_eq!(store.errors(), errors.load(Ordering::Relaxed));
    redis.restart().await.unwrap();
    // The manager reconnects on the next requests: within a few round trips it answers again.
    let mut answered = false;
    for _ in 0..20 {
        if store.ping().await.is_ok() {
            answered = true;
            break;
        }
    }
    assert!(answered, "the store never came back after a restart");
}

#[tokio::test]
async fn opening_does_not_connect_so_a_gateway_starts_while_its_store_is_down() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let store = Store::open(
        &settings(&format!("redis://:secretpw@127.0.0.1:{port}/0")),
        None,
    )
    .unwrap();
    let err = store.ping().await.unwrap_err().to_string();
    assert!(!err.contains("secretpw"), "{err}");
    assert_eq!(store.errors(), 1);
}
