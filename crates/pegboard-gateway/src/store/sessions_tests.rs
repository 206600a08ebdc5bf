//! The store's sessions against a real redis-server (`demo_servers::testing::redis`).

#![allow(deprecated)]

use super::*;
use crate::config::StoreSettings;
use crate::store::listed::Listed;
use demo_servers::testing::redis::RedisServer;
use rmcp::model::{ClientCapabilities, Implementation};

fn init_state() -> SessionState {
    SessionState::new(InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new("store-test", "1"),
    ))
}

async fn sessions(redis: &RedisServer, idle: Duration) -> Arc<StoredSessions> {
    let settings = StoreSettings::new(redis.url(0).parse().unwrap());
    StoredSessions::new(Store::open(&settings, None).unwrap(), idle)
}

#[tokio::test]
async fn a_session_written_by_one_replica_is_adopted_by_another_with_what_it_set() {
    let redis = RedisServer::start().await.unwrap();
    let a = sessions(&redis, Duration::from_secs(60)).await;
    let b = sessions(&redis, Duration::from_secs(60)).await;
    let rmcp_a = a.for_rmcp();
    rmcp_a.store("s1", &init_state()).await.unwrap();
    a.opened("s1", "ci").await;
    a.level_set("s1", LoggingLevel::Debug);
    a.subscription("s1", "notes://all", true);
    a.subscription("s1", "notes://gone", true);
    a.subscription("s1", "notes://gone", false);
    // The changes are written beside the requests: the sweep after them sees them done.
    let want = BTreeSet::from(["notes://all".to_string()]);
    let mut record = None;
    for _ in 0..50 {
        let r = b.fetch("s1").await.unwrap().unwrap();
        if r.level == Some(LoggingLevel::Debug) && r.subscriptions == want {
            record = Some(r);
            break;
        }
        tokio::task::yield_now().await;
        let _ = a.sweep().await;
    }
    let record = record.expect("the changes reached the store");
    assert_eq!(record.client, "ci");
    let mut c = b.store().connection();
    let ttl: i64 = redis::cmd("TTL")
        .arg(b.key("s1"))
        .query_async(&mut c)
        .await
        .unwrap();
    assert!((50..=60).contains(&ttl), "{ttl}");
    // b adopts: rmcp's load answers from what the check read, and the handshake gets the rest.
    b.stash("s1", Some(record));
    let state = b.for_rmcp().load("s1").await.unwrap().unwrap();
    assert_eq!(state.initialize_params.client_info.name, "store-test");
    let adopted = b.take_adopted("s1").unwrap();
    assert_eq!(adopted.level, Some(LoggingLevel::Debug));
    assert_eq!(adopted.subscriptions, want);
    assert!(b.take_adopted("s1").is_none());
    // Closed on a replica: still in the store. Ended by its client: gone.
    a.forget("s1");
    assert!(b.fetch("s1").await.unwrap().is_some());
    b.for_rmcp().delete("s1").await.unwrap();
    assert!(a.fetch("s1").await.unwrap().is_none());
    assert!(b.for_rmcp().load("s1").await.unwrap().is_none());
}

#[tokio::test]
async fn what_a_session_listed_is_kept_written_only_when_it_changes_and_adopted() {
    let redis = RedisServer::start().await.unwrap();
    let a = sessions(&redis, Duration::from_secs(60)).await;
    let b = sessions(&redis, Duration::from_secs(60)).await;
    a.for_rmcp().store("s1", &init_state()).await.unwrap();
    a.opened("s1", "ci").await;
    // Opened, it has listed nothing: the record says so by leaving `told` out.
    assert!(b.fetch("s1").await.unwrap().unwrap().listed.is_empty());
    a.listed("s1", |l| l.tools.replace("abc".into()).is_none());
    a.listed("s1", |l| {
        l.prompts = Some(BTreeSet::from(["everything".into()]));
        true
    });
    a.listed("s1", |l| l.resources.replace(BTreeSet::new()).is_none());
    let want = Listed {
        tools: Some("abc".into()),
        prompts: Some(BTreeSet::from(["everything".into()])),
        resources: Some(BTreeSet::new()),
    };
    let record = wait_for(&b, "s1", |r| r.listed == want).await;
    // b adopts: the handshake gets what it listed.
    b.stash("s1", Some(record));
    b.for_rmcp().load("s1").await.unwrap().unwrap();
    assert_eq!(b.take_adopted("s1").unwrap().listed, want);
    // The same answer again is not written: what another hand put there stays, and the write
    // of a later change (spawned after, on the same connection) finds it.
    let key = a.key("s1");
    let mut c = a.store().connection();
    redis::cmd("HSET")
        .arg(&key)
        .arg("told")
        .arg(r#"{"tools":"other"}"#)
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    // (As `Told` asks: the same fingerprint is no change.)
    a.listed("s1", |l| l.tools.as_deref() != Some("abc"));
    a.level_set("s1", LoggingLevel::Debug);
    let record = wait_for(&b, "s1", |r| r.level == Some(LoggingLevel::Debug)).await;
    assert_eq!(record.listed.tools.as_deref(), Some("other"));
    // A record of a release that kept no lists: never asked.
    redis::cmd("HDEL")
        .arg(&key)
        .arg("told")
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    assert!(b.fetch("s1").await.unwrap().unwrap().listed.is_empty());
    // Lost by the store, the record is written back whole, lists and all.
    redis::cmd("DEL")
        .arg(&key)
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    assert!(a.sweep().await);
    assert_eq!(b.fetch("s1").await.unwrap().unwrap().listed, want);
}

/// Session `id` as the store holds it once `done` says so (changes are written beside).
async fn wait_for(sessions: &StoredSessions, id: &str, done: impl Fn(&Record) -> bool) -> Record {
    for _ in 0..100 {
        if let Some(record) = sessions.fetch(id).await.unwrap()
            && done(&record)
        {
            return record;
        }
        tokio::task::yield_now().await;
    }
    panic!("the change of {id} did not reach the store");
}

#[tokio::test]
async fn what_the_store_lost_is_written_back_once_it_answers_again() {
    let mut redis = RedisServer::start().await.unwrap();
    let a = sessions(&redis, Duration::from_secs(60)).await;
    a.for_rmcp().store("s1", &init_state()).await.unwrap();
    a.opened("s1", "ci").await;
    redis.kill().await.unwrap();
    // Opened while the store is down: served here, written later.
    a.for_rmcp().store("s2", &init_state()).await.unwrap();
    a.opened("s2", "ci").await;
    let errors = a.store().errors();
    assert!(errors >= 1);
    redis.restart().await.unwrap();
    // The store came back empty: the sweep finds both gone and writes them whole.
    let mut back = false;
    for _ in 0..20 {
        let _ = a.sweep().await;
        if a.fetch("s1").await.ok().flatten().is_some()
            && a.fetch("s2").await.ok().flatten().is_some()
        {
            back = true;
            break;
        }
    }
    assert!(back, "the sessions were not written back");
}

#[tokio::test]
async fn an_entry_another_program_wrote_is_ignored_and_counted() {
    let redis = RedisServer::start().await.unwrap();
    let a = sessions(&redis, Duration::from_secs(60)).await;
    let mut c = a.store().connection();
    redis::cmd("HSET")
        .arg(a.key("odd"))
        .arg("client")
        .arg("ci")
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    assert!(a.fetch("odd").await.unwrap().is_none());
    assert_eq!(a.store().errors(), 1);
}
