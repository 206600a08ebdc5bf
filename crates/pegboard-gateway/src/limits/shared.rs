//! Limits counted beyond this replica: the seam between a client's limits and the store.
//!
//! Without a store a client's limits are counted here, in memory ([`super::Concurrency`],
//! [`super::CallRate`], [`super::SessionBook`]): today's counters, at today's cost. With one
//! (`--store`), a client that has limits counts them in the store instead, through
//! [`SharedLimits`], so that the fleet lets through what one replica would. What the store
//! hands back for a call or a session is a [`SharedPermit`]: its place, given back when dropped.

use std::fmt;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use super::errors::LimitError;

/// A boxed future, for the trait's methods (a store round trip costs far more than the box).
pub(crate) type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The limits of one call, as the client's entry sets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallLimits {
    /// `callsPerMinute`.
    pub(crate) per_minute: Option<NonZeroU32>,
    /// `maxConcurrent`.
    pub(crate) concurrent: Option<usize>,
}

impl CallLimits {
    /// Whether any is set.
    pub(crate) fn any(&self) -> bool {
        self.per_minute.is_some() || self.concurrent.is_some()
    }
}

/// Where limits are counted for the whole fleet (the store).
pub(crate) trait SharedLimits: Send + Sync + fmt::Debug {
    /// Admit one call of `client` under `limits`, in one round trip: its place among
    /// `maxConcurrent` (held by the permit) and one of its `callsPerMinute`.
    ///
    /// # Errors
    /// [`LimitError::Rate`] or [`LimitError::Concurrency`] as on one replica;
    /// [`LimitError::Unavailable`] when the store cannot count it.
    fn admit_call<'a>(
        &'a self,
        client: &'a str,
        limits: CallLimits,
    ) -> Pending<'a, Result<SharedPermit, LimitError>>;

    /// Reserve one session of `client`, who may hold `max` across the fleet; `replacing` is a
    /// session of this client closed to make room (its place is given up in the same step).
    /// `adopting`: the id of a session taken over from another replica, which keeps the place
    /// it has under that id (a new session's place is named by its id once it has one:
    /// [`SharedPermit::named`]).
    ///
    /// # Errors
    /// [`LimitError::ClientSessions`] at the limit; [`LimitError::Unavailable`] when the store
    /// cannot count it.
    fn reserve_session<'a>(
        &'a self,
        client: &'a str,
        max: usize,
        replacing: Option<SharedPermit>,
        adopting: Option<&'a str>,
    ) -> Pending<'a, Result<SharedPermit, LimitError>>;
}

/// A place counted in the store (a call in progress, an open session): given back when
/// dropped; if this replica dies first, it expires on its own.
#[must_use = "the place is given back as soon as the permit is dropped"]
pub(crate) struct SharedPermit(Option<Box<dyn Place>>);

/// What a permit holds: something that gives its place back when dropped, and can name it.
#[cfg_attr(not(feature = "store"), allow(dead_code))]
pub(crate) trait Place: Send + Sync + fmt::Debug {
    /// The place's name in the store, and stop giving it back on drop: the caller gives it
    /// up itself (in the same step as it takes another).
    fn disarm(&mut self) -> String;

    /// Give the place back now, and wait until the store has it (bounded by the store's
    /// round trip; if that fails, the place expires by itself).
    fn release(self: Box<Self>) -> Pending<'static, ()>;

    /// The same place under the name `name` (one round trip; kept under its old name when
    /// the store cannot be reached).
    fn renamed(self: Box<Self>, name: String) -> Pending<'static, Box<dyn Place>>;
}

// Only the store makes permits (the cargo feature `store`).
#[cfg_attr(not(feature = "store"), allow(dead_code))]
impl SharedPermit {
    /// A permit that holds `place`.
    pub(crate) fn new(place: impl Place + 'static) -> Self {
        Self(Some(Box::new(place)))
    }

    /// A permit that holds nothing (a call with only a rate limit holds no place).
    pub(crate) fn none() -> Self {
        Self(None)
    }

    /// The place's name, no longer given back on drop (see [`Place::disarm`]).
    pub(crate) fn disarm(mut self) -> Option<String> {
        self.0.take().map(|mut place| place.disarm())
    }

    /// Whether it holds a place (a call with only a rate limit holds none).
    pub(crate) fn holds(&self) -> bool {
        self.0.is_some()
    }

    /// The same place, named `name` in the store (see [`Place::renamed`]).
    pub(crate) async fn named(mut self, name: &str) -> Self {
        match self.0.take() {
            Some(place) => Self(Some(place.renamed(name.to_string()).await)),
            None => self,
        }
    }

    /// Give the place back and wait until the store has it (see [`Place::release`]).
    pub(crate) async fn release(mut self) {
        if let Some(place) = self.0.take() {
            place.release().await;
        }
    }
}

impl fmt::Debug for SharedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SharedPermit").field(&self.0).finish()
    }
}

/// A call's admission taken before the call reaches the pipeline (the HTTP front counts a
/// fleet-limited client's call in the store before it knows which way the call goes): the
/// pipeline takes it instead of counting the call again. Cloned into the request's
/// extensions; taken once.
pub(crate) struct PreAdmitted<A>(Arc<Mutex<Option<Result<A, LimitError>>>>);

// By hand: a derive would ask `A: Clone`, and an admission is not.
impl<A> Clone for PreAdmitted<A> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<A> PreAdmitted<A> {
    /// The admission `taken`.
    pub(crate) fn new(taken: Result<A, LimitError>) -> Self {
        Self(Arc::new(Mutex::new(Some(taken))))
    }

    /// The admission, once (`None` after the first take).
    pub(crate) fn take(&self) -> Option<Result<A, LimitError>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl<A> fmt::Debug for PreAdmitted<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PreAdmitted")
    }
}
