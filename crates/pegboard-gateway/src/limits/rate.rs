//! `callsPerMinute`: a token bucket of that many calls, refilled evenly over a minute (GCRA,
//! from the `governor` crate: one atomic state, no lock, no timer).

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

/// One client's call rate.
pub struct CallRate<C: Clock + Clone = DefaultClock> {
    per_minute: NonZeroU32,
    limiter: RateLimiter<NotKeyed, InMemoryState, C, NoOpMiddleware<C::Instant>>,
    clock: C,
}

impl CallRate {
    /// At most `per_minute` calls in any minute: a full minute's worth may come at once, then
    /// one more every `60 s / per_minute`.
    pub fn new(per_minute: NonZeroU32) -> Self {
        Self::with_clock(per_minute, DefaultClock::default())
    }
}

impl<C: Clock + Clone> CallRate<C> {
    /// [`CallRate::new`] on another clock (tests drive a fake one).
    pub fn with_clock(per_minute: NonZeroU32, clock: C) -> Self {
        Self {
            per_minute,
            limiter: RateLimiter::direct_with_clock(Quota::per_minute(per_minute), clock.clone()),
            clock,
        }
    }

    /// The limit.
    pub fn per_minute(&self) -> NonZeroU32 {
        self.per_minute
    }

    /// Take one call: `Ok`, or how long until the next one is allowed.
    ///
    /// # Errors
    /// The wait until a call is allowed again.
    pub fn check(&self) -> Result<(), Duration> {
        self.limiter
            .check()
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

impl<C: Clock + Clone> std::fmt::Debug for CallRate<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRate")
            .field("per_minute", &self.per_minute)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;

    use super::*;

    fn n(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    #[test]
    fn a_minutes_calls_pass_at_once_then_one_per_interval() {
        let clock = FakeRelativeClock::default();
        let rate = CallRate::with_clock(n(6), clock.clone());
        for _ in 0..6 {
            rate.check().unwrap();
        }
        let wait = rate.check().unwrap_err();
        assert_eq!(wait, Duration::from_secs(10), "60 s / 6 calls");
        clock.advance(Duration::from_secs(9));
        assert_eq!(rate.check().unwrap_err(), Duration::from_secs(1));
        clock.advance(Duration::from_secs(1));
        rate.check().unwrap();
        assert!(rate.check().is_err());
    }

    #[test]
    fn a_quiet_minute_refills_the_whole_bucket() {
        let clock = FakeRelativeClock::default();
        let rate = CallRate::with_clock(n(3), clock.clone());
        for _ in 0..3 {
            rate.check().unwrap();
        }
        assert!(rate.check().is_err());
        clock.advance(Duration::from_secs(60));
        for _ in 0..3 {
            rate.check().unwrap();
        }
        assert!(rate.check().is_err());
    }
}
