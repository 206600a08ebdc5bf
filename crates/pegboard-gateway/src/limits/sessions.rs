//! The session book: who holds each HTTP session, which are idle, and who gets the next one.
//!
//! A new session is first *reserved* ([`SessionBook::reserve`]): the client's own limit
//! (`maxSessions`, by default its [`fair share`](super::settings::fair_share) of
//! `--max-sessions`) and the global cap are checked in one step, under one lock. A client at
//! its own limit gives up its least recently used idle session; at the global cap the least
//! recently used idle session of any client is given up. The book names that session
//! ([`Reservation::evicted`]) and forgets it at once; the caller closes it, then opens the new
//! one and [`confirms`](Reservation::confirm) the reservation with its id. Only when no
//! session that could make room is idle is the request refused, with an error naming the
//! limit. So a client that opens sessions and abandons them recycles its own, and never locks
//! another client out.
//!
//! "Idle" is "no request in progress": the front marks each request with
//! [`SessionBook::begin`] (or, holding the session's [`Activity`], with
//! [`SessionBook::begin_on`]: atomics alone, no lock, no lookup — the express lane's way, once
//! per request). Recency is a counter, not a clock: no time is read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use foldhash::fast::RandomState;

use super::errors::LimitError;
use super::shared::SharedPermit;

/// Every open HTTP session, by id, with its client and activity.
#[derive(Debug)]
pub struct SessionBook {
    global_max: usize,
    inner: Mutex<Book>,
    /// The recency counter.
    tick: AtomicU64,
}

#[derive(Debug, Default)]
struct Book {
    sessions: HashMap<Arc<str>, Entry, RandomState>,
    /// Sessions per client, reservations included.
    per_client: HashMap<Arc<str>, usize, RandomState>,
    /// Reservations not confirmed yet.
    reserved: usize,
}

#[derive(Debug)]
struct Entry {
    client: Arc<str>,
    activity: Arc<Activity>,
    /// Its place among its client's `maxSessions` in the store (given back when the entry
    /// goes), when that limit is counted for the fleet.
    shared: Option<SharedPermit>,
}

/// A session's requests in progress and when it was last used (read by the book under its
/// lock, changed by each request without it).
#[derive(Debug, Default)]
pub struct Activity {
    busy: AtomicUsize,
    last_used: AtomicU64,
}

/// A session the book gave up to make room: close it before opening the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvictedSession {
    /// The session's id.
    pub id: Arc<str>,
    /// The client that held it.
    pub client: Arc<str>,
}

/// A place for one new session, held until [`confirm`](Reservation::confirm)ed with the
/// session's id; dropped unconfirmed (the session could not be opened), the place is freed.
#[derive(Debug)]
#[must_use = "an unconfirmed reservation frees its place when dropped"]
pub struct Reservation {
    book: Arc<SessionBook>,
    client: Arc<str>,
    evicted: Option<EvictedSession>,
    /// The evicted session's place in the store, if it had one.
    evicted_shared: Option<SharedPermit>,
    /// This session's place in the store, once taken ([`Reservation::hold`]).
    shared: Option<SharedPermit>,
    confirmed: bool,
}

/// One request in progress on a session (see [`SessionBook::begin`]); the session is idle
/// again once every such guard is dropped.
#[derive(Debug)]
#[must_use = "the session counts as busy only while this is held"]
pub struct SessionActivity {
    book: Arc<SessionBook>,
    activity: Arc<Activity>,
}

impl SessionBook {
    /// A book for at most `global_max` sessions (`--max-sessions`).
    pub fn new(global_max: usize) -> Arc<Self> {
        Arc::new(Self {
            global_max,
            inner: Mutex::new(Book::default()),
            tick: AtomicU64::new(0),
        })
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        // Every update below leaves the book consistent before it can panic: safe to go on.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sessions open or reserved.
    #[cfg(test)]
    pub fn open(&self) -> usize {
        let book = self.book();
        book.sessions.len() + book.reserved
    }

    /// Sessions open or reserved by `client`.
    #[cfg(test)]
    pub fn open_by(&self, client: &str) -> usize {
        self.book().per_client.get(client).copied().unwrap_or(0)
    }

    /// Reserve a new session for `client`, who may hold `client_max` at most.
    ///
    /// # Errors
    /// [`LimitError::ClientSessions`] when the client holds `client_max` sessions and all are
    /// busy; [`LimitError::GatewaySessions`] at the global cap with every session busy.
    pub fn reserve(
        self: &Arc<Self>,
        client: &Arc<str>,
        client_max: usize,
    ) -> Result<Reservation, LimitError> {
        let mut book = self.book();
        let held = book.per_client.get(&**client).copied().unwrap_or(0);
        // A client allowed as many as the gateway (the only one, or `--token`'s without
        // clients) meets the global cap first: that is the limit to name.
        let evicted = if held >= client_max && client_max < self.global_max {
            let victim = book.least_recent_idle(|c| c == &**client);
            Some(victim.ok_or_else(|| LimitError::ClientSessions {
                client: client.to_string(),
                limit: client_max,
            })?)
        } else if book.sessions.len() + book.reserved >= self.global_max {
            let victim = book.least_recent_idle(|_| true);
            Some(victim.ok_or(LimitError::GatewaySessions {
                limit: self.global_max,
            })?)
        } else {
            None
        };
        let (evicted, evicted_shared) = match evicted.and_then(|id| book.forget(&id)) {
            Some((evicted, shared)) => (Some(evicted), shared),
            None => (None, None),
        };
        *book.per_client.entry(Arc::clone(client)).or_default() += 1;
        book.reserved += 1;
        Ok(Reservation {
            book: Arc::clone(self),
            client: Arc::clone(client),
            evicted,
            evicted_shared,
            shared: None,
            confirmed: false,
        })
    }

    /// Give up `client`'s least recently used idle session, to make room among its
    /// `maxSessions` counted for the whole fleet: the session (close it) and its place in the
    /// store. `None` when none of its sessions here is idle.
    pub(crate) fn evict_idle_of(
        &self,
        client: &str,
    ) -> Option<(EvictedSession, Option<SharedPermit>)> {
        let mut book = self.book();
        let victim = book.least_recent_idle(|c| c == client)?;
        book.forget(&victim)
    }

    /// A request on session `id` begins: the session is busy (never evicted) until the guard
    /// is dropped, and becomes the most recently used. `None` for a session the book does not
    /// hold (closed, evicted, or opened before the book).
    pub fn begin(self: &Arc<Self>, id: &str) -> Option<SessionActivity> {
        let activity = self.activity(id)?;
        Some(self.begin_on(activity))
    }

    /// The activity of session `id`, which [`SessionBook::begin_on`] marks without the book's
    /// lock; `None` for a session the book does not hold.
    pub fn activity(&self, id: &str) -> Option<Arc<Activity>> {
        self.book()
            .sessions
            .get(id)
            .map(|entry| Arc::clone(&entry.activity))
    }

    /// [`SessionBook::begin`] for the session whose `activity` this is. Of a session the book
    /// has forgotten meanwhile (closed, evicted), it marks nothing the book reads.
    pub fn begin_on(self: &Arc<Self>, activity: Arc<Activity>) -> SessionActivity {
        activity.busy.fetch_add(1, Ordering::AcqRel);
        activity
            .last_used
            .store(self.next_tick(), Ordering::Release);
        SessionActivity {
            book: Arc::clone(self),
            activity,
        }
    }

    fn next_tick(&self) -> u64 {
        self.tick.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Session `id` ended (the client's DELETE, idle expiry, or the close of an evicted one):
    /// forget it. Unknown ids are ignored.
    pub fn closed(&self, id: &str) {
        // Its place in the store, if any, is given back as the permit drops (outside the lock).
        let forgotten = self.book().forget(id);
        drop(forgotten);
    }
}

impl Book {
    /// The idle session used longest ago among those whose client passes `of`.
    fn least_recent_idle(&self, of: impl Fn(&str) -> bool) -> Option<Arc<str>> {
        self.sessions
            .iter()
            .filter(|(_, e)| e.activity.busy.load(Ordering::Acquire) == 0 && of(&e.client))
            .min_by_key(|(_, e)| e.activity.last_used.load(Ordering::Acquire))
            .map(|(id, _)| Arc::clone(id))
    }

    fn forget(&mut self, id: &str) -> Option<(EvictedSession, Option<SharedPermit>)> {
        let (id, entry) = self.sessions.remove_entry(id)?;
        self.release(&entry.client);
        Some((
            EvictedSession {
                id,
                client: entry.client,
            },
            entry.shared,
        ))
    }

    fn release(&mut self, client: &str) {
        if let Some(n) = self.per_client.get_mut(client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(client);
            }
        }
    }
}

impl Reservation {
    /// The session given up to make room for this one: close it.
    pub fn evicted(&self) -> Option<&EvictedSession> {
        self.evicted.as_ref()
    }

    /// The evicted session's place in the store, when it was this client's (to give up in the
    /// same step as this session's is taken).
    pub(crate) fn take_evicted_place(&mut self) -> Option<SharedPermit> {
        let of_this_client = self
            .evicted
            .as_ref()
            .is_some_and(|e| e.client == self.client);
        self.evicted_shared.take().filter(|_| of_this_client)
    }

    /// Hold `shared`, this session's place in the store, until the session ends.
    pub(crate) fn hold(&mut self, shared: SharedPermit) {
        self.shared = Some(shared);
    }

    /// The session has its id: its place in the store, if it has one, is named by it.
    pub(crate) async fn name_place(&mut self, id: &str) {
        if let Some(shared) = self.shared.take() {
            self.shared = Some(shared.named(id).await);
        }
    }

    /// The session was opened with `id`: it is now in the book, idle, most recently used.
    pub fn confirm(mut self, id: impl Into<Arc<str>>) {
        self.confirmed = true;
        let tick = self.book.next_tick();
        let mut book = self.book.book();
        book.reserved = book.reserved.saturating_sub(1);
        let id: Arc<str> = id.into();
        let entry = Entry {
            client: Arc::clone(&self.client),
            activity: Arc::new(Activity {
                busy: AtomicUsize::new(0),
                last_used: AtomicU64::new(tick),
            }),
            shared: self.shared.take(),
        };
        if let Some(old) = book.sessions.insert(id, entry) {
            // The same id twice (a session manager reusing ids): the old entry is replaced.
            book.release(&old.client);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.confirmed {
            let mut book = self.book.book();
            book.reserved = book.reserved.saturating_sub(1);
            book.release(&self.client);
        }
    }
}

impl Drop for SessionActivity {
    fn drop(&mut self) {
        // Used last now: at the end of its request, as at the start.
        self.activity
            .last_used
            .store(self.book.next_tick(), Ordering::Release);
        self.activity.busy.fetch_sub(1, Ordering::AcqRel);
    }
}
