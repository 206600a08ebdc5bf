//! The session book's admission rules.

use std::sync::Arc;

use super::{LimitError, SessionBook};

fn name(s: &str) -> Arc<str> {
    Arc::from(s)
}

/// Open a session for `client` (limit `max`) with id `id`; returns the evicted session's id.
fn open(
    book: &Arc<SessionBook>,
    client: &str,
    max: usize,
    id: &str,
) -> Result<Option<String>, LimitError> {
    let r = book.reserve(&name(client), max)?;
    let evicted = r.evicted().map(|e| e.id.to_string());
    r.confirm(id);
    Ok(evicted)
}

#[test]
fn a_client_at_its_limit_gives_up_its_own_least_recent_idle_session() {
    let book = SessionBook::new(100);
    for i in 0..3 {
        assert_eq!(open(&book, "greedy", 3, &format!("g{i}")).unwrap(), None);
    }
    // g0 was used recently; g1 is now the least recently used.
    drop(book.begin("g0"));
    assert_eq!(
        open(&book, "greedy", 3, "g3").unwrap().as_deref(),
        Some("g1")
    );
    assert_eq!(book.open_by("greedy"), 3);
    assert!(
        book.begin("g1").is_none(),
        "the evicted session is forgotten"
    );
}

#[test]
fn a_client_at_its_limit_with_every_session_busy_is_refused_naming_the_limit() {
    let book = SessionBook::new(100);
    open(&book, "ci-bot", 2, "a").unwrap();
    open(&book, "ci-bot", 2, "b").unwrap();
    let _busy_a = book.begin("a").unwrap();
    let _busy_b = book.begin("b").unwrap();
    let refused = book.reserve(&name("ci-bot"), 2).unwrap_err();
    assert_eq!(
        refused,
        LimitError::ClientSessions {
            client: "ci-bot".into(),
            limit: 2
        }
    );
    assert!(refused.to_string().contains("`maxSessions`"), "{refused}");
    // Another client is not affected.
    assert_eq!(open(&book, "analyst", 2, "c").unwrap(), None);
}

#[test]
fn one_client_abandoning_sessions_never_locks_another_out() {
    // The case: 1,000 `initialize` requests, never deleted, from one client.
    let book = SessionBook::new(1000);
    let share = super::fair_share(1000, 3);
    for i in 0..1000 {
        open(&book, "abandoner", share, &format!("x{i}")).unwrap();
    }
    assert_eq!(book.open_by("abandoner"), share);
    for i in 0..share {
        assert_eq!(
            open(&book, "analyst", share, &format!("a{i}")).unwrap(),
            None
        );
    }
    assert_eq!(book.open(), 2 * share);
}

#[test]
fn at_the_global_cap_the_least_recent_idle_session_of_anyone_is_closed() {
    let book = SessionBook::new(3);
    open(&book, "a", 10, "a1").unwrap();
    open(&book, "b", 10, "b1").unwrap();
    open(&book, "a", 10, "a2").unwrap();
    let _busy = book.begin("a1").unwrap();
    // a1 is busy: b1 is the least recently used idle one.
    assert_eq!(open(&book, "c", 10, "c1").unwrap().as_deref(), Some("b1"));
    assert_eq!(book.open(), 3);
    assert_eq!(book.open_by("b"), 0);
}

#[test]
fn at_the_global_cap_with_every_session_busy_a_new_client_is_refused() {
    let book = SessionBook::new(2);
    open(&book, "a", 10, "a1").unwrap();
    open(&book, "b", 10, "b1").unwrap();
    let _x = book.begin("a1").unwrap();
    let _y = book.begin("b1").unwrap();
    let refused = book.reserve(&name("c"), 10).unwrap_err();
    assert_eq!(refused, LimitError::GatewaySessions { limit: 2 });
    assert!(refused.to_string().contains("--max-sessions"), "{refused}");
}

#[test]
fn an_unconfirmed_reservation_frees_its_place_and_counts_while_held() {
    let book = SessionBook::new(1);
    let held = book.reserve(&name("a"), 1).unwrap();
    assert_eq!(book.open(), 1);
    // Nothing idle to give up while the only place is reserved.
    assert!(book.reserve(&name("b"), 1).is_err());
    drop(held);
    assert_eq!(book.open(), 0);
    assert_eq!(book.open_by("a"), 0);
    open(&book, "b", 1, "b1").unwrap();
}

#[test]
fn closed_sessions_are_forgotten_and_free_their_client_share() {
    let book = SessionBook::new(10);
    open(&book, "a", 1, "a1").unwrap();
    book.closed("a1");
    book.closed("never-opened");
    assert_eq!(book.open(), 0);
    assert_eq!(open(&book, "a", 1, "a2").unwrap(), None);
}

#[test]
fn a_session_is_idle_again_only_when_every_request_on_it_ended() {
    let book = SessionBook::new(1);
    open(&book, "a", 5, "a1").unwrap();
    let first = book.begin("a1").unwrap();
    let second = book.begin("a1").unwrap();
    drop(first);
    assert!(
        book.reserve(&name("b"), 5).is_err(),
        "a1 still has a request"
    );
    drop(second);
    assert_eq!(open(&book, "b", 5, "b1").unwrap().as_deref(), Some("a1"));
}

#[test]
fn a_client_allowed_the_whole_gateway_meets_the_global_cap_and_is_told_so() {
    let book = SessionBook::new(2);
    open(&book, "default", 2, "a").unwrap();
    open(&book, "default", 2, "b").unwrap();
    let _busy_a = book.begin("a").unwrap();
    let _busy_b = book.begin("b").unwrap();
    assert_eq!(
        book.reserve(&name("default"), 2).unwrap_err(),
        LimitError::GatewaySessions { limit: 2 }
    );
}

#[test]
fn a_request_marked_through_a_kept_activity_counts_as_one_marked_by_id() {
    let book = SessionBook::new(2);
    open(&book, "lane", 2, "a").unwrap();
    open(&book, "lane", 2, "b").unwrap();
    let a = book.activity("a").expect("held");
    let busy = book.begin_on(Arc::clone(&a));
    // At the cap, `a` busy: `b` is the one given up.
    assert_eq!(open(&book, "lane", 2, "c").unwrap().as_deref(), Some("b"));
    drop(busy);
    // `a` idle again but used after `c` was opened: `c` is the least recent now.
    drop(book.begin_on(Arc::clone(&a)));
    assert_eq!(open(&book, "lane", 2, "d").unwrap().as_deref(), Some("c"));
    // A kept activity of a forgotten session marks nothing the book reads.
    book.closed("a");
    assert!(book.activity("a").is_none());
    let _stale = book.begin_on(a);
    assert_eq!(open(&book, "lane", 2, "e").unwrap(), None);
}
