//! When a supervised server is started again: 1 s after it stopped, twice as long after each
//! further failure or short run, at most 60 s, and 1 s again once a run lasted a minute. Pure
//! policy: the instants come from the caller (the supervisor reads tokio's clock, which tests
//! pause), so the schedule is tested without waiting.

use std::time::{Duration, Instant};

/// First wait before a restart.
pub(crate) const BACKOFF_MIN: Duration = Duration::from_secs(1);
/// Longest wait between restarts.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// A run this long resets the backoff.
pub(crate) const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// One server's restart schedule.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    /// The wait before the next try.
    wait: Duration,
    /// When the running server (last) started.
    up_since: Instant,
}

impl Backoff {
    /// A server that started at `now`: its first restart waits [`BACKOFF_MIN`].
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            wait: BACKOFF_MIN,
            up_since: now,
        }
    }

    /// The server stopped at `now`: the wait before starting it again (back to the minimum
    /// after a run of at least [`HEALTHY_RUN`]).
    pub(crate) fn stopped(&mut self, now: Instant) -> Duration {
        if now.saturating_duration_since(self.up_since) >= HEALTHY_RUN {
            self.wait = BACKOFF_MIN;
        }
        self.wait
    }

    /// The wait is over and a start is tried: should it fail, or the run it starts be short,
    /// the next wait is twice as long (at most [`BACKOFF_MAX`]).
    pub(crate) fn trying(&mut self) {
        self.wait = (self.wait * 2).min(BACKOFF_MAX);
    }

    /// The wait before the next try (after a failed one: see [`trying`](Self::trying)).
    pub(crate) fn wait(&self) -> Duration {
        self.wait
    }

    /// A start succeeded at `now`: its run is measured from then.
    pub(crate) fn started(&mut self, now: Instant) {
        self.up_since = now;
    }

    /// A login started the server at `now`: a fresh schedule.
    pub(crate) fn logged_in(&mut self, now: Instant) {
        *self = Self::new(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// The waits of `n` stops in a row, each restart succeeding and dying `run` later.
    fn waits(n: usize, run: Duration) -> Vec<u64> {
        let mut now = Instant::now();
        let mut backoff = Backoff::new(now);
        let mut waits = Vec::new();
        for _ in 0..n {
            now += run;
            let wait = backoff.stopped(now);
            waits.push(wait.as_secs());
            now += wait;
            backoff.trying();
            backoff.started(now);
        }
        waits
    }

    #[test]
    fn short_runs_double_the_wait_from_one_second_up_to_a_minute() {
        assert_eq!(
            waits(9, Duration::from_millis(10)),
            [1, 2, 4, 8, 16, 32, 60, 60, 60]
        );
        // Just short of healthy is still short.
        assert_eq!(
            waits(4, HEALTHY_RUN - Duration::from_millis(1)),
            [1, 2, 4, 8]
        );
    }

    #[test]
    fn a_healthy_run_starts_the_schedule_again() {
        assert_eq!(waits(4, HEALTHY_RUN), [1, 1, 1, 1]);
        let start = Instant::now();
        let mut backoff = Backoff::new(start);
        let mut now = start;
        for expected in [1, 2, 4] {
            now += secs(1);
            assert_eq!(backoff.stopped(now), secs(expected));
            now += secs(expected);
            backoff.trying();
            backoff.started(now);
        }
        now += HEALTHY_RUN;
        assert_eq!(backoff.stopped(now), secs(1));
    }

    #[test]
    fn failed_tries_double_the_wait_too() {
        let now = Instant::now();
        let mut backoff = Backoff::new(now);
        assert_eq!(backoff.stopped(now + secs(1)), secs(1));
        let mut seen = Vec::new();
        for _ in 0..8 {
            backoff.trying();
            // The try failed: the next wait.
            seen.push(backoff.wait().as_secs());
        }
        assert_eq!(seen, [2, 4, 8, 16, 32, 60, 60, 60]);
        // A failed try is no run: a stop after the next good start still counts from it.
        backoff.started(now + secs(500));
        assert_eq!(backoff.stopped(now + secs(501)), secs(60));
    }

    #[test]
    fn a_login_starts_the_schedule_again() {
        let now = Instant::now();
        let mut backoff = Backoff::new(now);
        backoff.stopped(now);
        for _ in 0..5 {
            backoff.trying();
        }
        backoff.logged_in(now + secs(1));
        assert_eq!(backoff.stopped(now + secs(2)), secs(1));
    }
}
