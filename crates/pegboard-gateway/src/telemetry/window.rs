//! The rolling window behind the status page: calls, errors and latency percentiles of the last
//! five minutes, per server, in bounded memory.
//!
//! Counters only ever grow (a call adds with relaxed atomics, never loses a count, never waits);
//! at the first touch of each 30-second period the window copies them (a snapshot, under a lock
//! taken once a period). "The last five minutes" is now minus the oldest snapshot of the last
//! ten periods, so the window spans 4.5 to 5 minutes. Latencies go in log-linear buckets: four
//! per power of two from 1 µs to 2^37 ns (137 s), so a percentile is within 12.5% of the truth.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Length of one period.
pub const PERIOD: Duration = Duration::from_secs(30);
/// Periods in the window.
pub const PERIODS: u64 = 10;
/// The window, as shown (`PERIOD * PERIODS`).
pub const WINDOW: Duration = Duration::from_secs(300);

/// The smallest power of two that has buckets: 2^10 ns ≈ 1 µs (faster goes in the first).
const MIN_EXP: u32 = 10;
/// The largest: 2^37 ns ≈ 137 s (slower goes in the last).
const MAX_EXP: u32 = 37;
/// Buckets per power of two.
const SUB: u32 = 4;
/// Number of latency buckets.
pub const BUCKETS: usize = ((MAX_EXP - MIN_EXP + 1) * SUB) as usize;

/// The latency bucket of `ns`: four linear steps within each power of two.
fn bucket_of(ns: u64) -> usize {
    if ns < (1 << MIN_EXP) {
        return 0;
    }
    let exp = 63 - ns.leading_zeros(); // floor(log2 ns), >= MIN_EXP here
    if exp > MAX_EXP {
        return BUCKETS - 1;
    }
    let sub = (ns >> (exp - 2)) & 0b11; // the two bits after the leading one
    ((exp - MIN_EXP) * SUB + u32::try_from(sub).unwrap_or(0)) as usize
}

/// The middle of bucket `i`, in nanoseconds (the value a percentile in it is reported as).
fn bucket_middle_ns(i: usize) -> f64 {
    let i = u32::try_from(i).unwrap_or(0);
    let exp = MIN_EXP + i / SUB;
    let sub = f64::from(i % SUB);
    let base = 2f64.powi(i32::try_from(exp).unwrap_or(0));
    base * (1.0 + (sub + 0.5) / f64::from(SUB))
}

/// Counts at one instant.
#[derive(Debug, Clone)]
struct Counts {
    calls: u64,
    errors: u64,
    latency: Box<[u64; BUCKETS]>,
}

/// What the window shows.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowStats {
    /// Calls that ended in the window.
    pub calls: u64,
    /// Of which ended with an error (any `error_type`, `tool_error` included).
    pub errors: u64,
    /// Median latency, milliseconds (None without calls).
    pub p50_ms: Option<f64>,
    /// 99th percentile latency, milliseconds.
    pub p99_ms: Option<f64>,
}

/// One server's window.
#[derive(Debug)]
pub struct Window {
    calls: AtomicU64,
    errors: AtomicU64,
    latency: Box<[AtomicU64]>,
    /// The period of the newest snapshot (`u64::MAX`: none yet).
    period: AtomicU64,
    /// `(period, counts at its first touch)`, oldest first, at most `PERIODS`.
    snapshots: Mutex<VecDeque<(u64, Counts)>>,
}

impl Default for Window {
    fn default() -> Self {
        Self {
            calls: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            latency: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            period: AtomicU64::new(u64::MAX),
            snapshots: Mutex::new(VecDeque::with_capacity(PERIODS as usize + 1)),
        }
    }
}

impl Window {
    /// Count a call that ended in `period` after `elapsed`.
    #[inline]
    pub fn record(&self, period: u64, elapsed: Duration, error: bool) {
        if self.period.load(Ordering::Acquire) != period {
            self.rotate(period);
        }
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        if let Some(b) = self.latency.get(bucket_of(ns)) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        if error {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
    }

    /// The window that ends in `period`.
    #[must_use]
    pub fn stats(&self, period: u64) -> WindowStats {
        self.rotate(period);
        let now = self.counts();
        let oldest_kept = period.saturating_sub(PERIODS - 1);
        let base = {
            let snapshots = self
                .snapshots
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            snapshots
                .iter()
                .find(|(p, _)| *p >= oldest_kept)
                .map(|(_, c)| c.clone())
        };
        // No snapshot inside the window: nothing happened in it (the first touch of any period
        // in it would have taken one).
        let base = base.unwrap_or_else(|| now.clone());
        let mut latency = [0u64; BUCKETS];
        for (i, slot) in latency.iter_mut().enumerate() {
            *slot = now.latency[i].saturating_sub(base.latency[i]);
        }
        let calls = now.calls.saturating_sub(base.calls);
        WindowStats {
            calls,
            errors: now.errors.saturating_sub(base.errors),
            p50_ms: percentile(&latency, 0.50),
            p99_ms: percentile(&latency, 0.99),
        }
    }

    fn counts(&self) -> Counts {
        let mut latency = Box::new([0u64; BUCKETS]);
        for (slot, b) in latency.iter_mut().zip(self.latency.iter()) {
            *slot = b.load(Ordering::Relaxed);
        }
        Counts {
            calls: self.calls.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            latency,
        }
    }

    /// Take the snapshot of `period` if it is newer than the last one (once per period).
    #[cold]
    fn rotate(&self, period: u64) {
        let mut snapshots = self
            .snapshots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let newest = self.period.load(Ordering::Acquire);
        if newest != u64::MAX && newest >= period {
            return;
        }
        snapshots.push_back((period, self.counts()));
        while snapshots.len() > PERIODS as usize {
            snapshots.pop_front();
        }
        self.period.store(period, Ordering::Release);
    }
}

/// The latency (ms) below which `q` of the calls fall, at the middle of its bucket.
fn percentile(latency: &[u64; BUCKETS], q: f64) -> Option<f64> {
    let total: u64 = latency.iter().sum();
    if total == 0 {
        return None;
    }
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let rank = ((total as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (i, count) in latency.iter().enumerate() {
        seen += count;
        if seen >= rank {
            return Some(bucket_middle_ns(i) / 1e6);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_cover_1us_to_137s() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1023), 0);
        assert_eq!(bucket_of(1024), 0);
        assert_eq!(bucket_of(1280), 1);
        assert_eq!(bucket_of(2048), 4);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        let mut last = 0;
        for ns in (1024..200_000_000_000u64).step_by(9_999_991) {
            let b = bucket_of(ns);
            assert!(b >= last);
            last = b;
            let mid = bucket_middle_ns(b);
            #[allow(clippy::cast_precision_loss)]
            let err = (mid - ns as f64).abs() / ns as f64;
            if ns < (1 << MAX_EXP) {
                assert!(err <= 0.125, "{ns} ns -> bucket {b} middle {mid}: {err}");
            }
        }
    }

    #[test]
    fn the_window_counts_the_last_ten_periods_and_forgets_older_ones() {
        let w = Window::default();
        for _ in 0..5 {
            w.record(100, Duration::from_millis(1), false);
        }
        w.record(100, Duration::from_millis(3), true);
        for _ in 0..4 {
            w.record(105, Duration::from_millis(10), true);
        }
        let s = w.stats(105);
        assert_eq!((s.calls, s.errors), (10, 5));
        // Period 100 is still inside the window that ends in 109 ...
        assert_eq!(w.stats(109).calls, 10);
        // ... and out of the one that ends in 110.
        let s = w.stats(110);
        assert_eq!((s.calls, s.errors), (4, 4));
        // Nothing for ten periods: an empty window.
        let s = w.stats(200);
        assert_eq!((s.calls, s.errors, s.p50_ms), (0, 0, None));
        w.record(200, Duration::from_millis(2), false);
        assert_eq!(w.stats(200).calls, 1);
    }

    #[test]
    fn percentiles_fall_in_the_right_bucket() {
        let w = Window::default();
        for _ in 0..98 {
            w.record(1, Duration::from_millis(2), false);
        }
        w.record(1, Duration::from_millis(500), false);
        w.record(1, Duration::from_millis(500), false);
        let s = w.stats(1);
        let p50 = s.p50_ms.unwrap_or_default();
        let p99 = s.p99_ms.unwrap_or_default();
        assert!((p50 - 2.0).abs() / 2.0 <= 0.125, "p50 {p50}");
        assert!((p99 - 500.0).abs() / 500.0 <= 0.125, "p99 {p99}");
    }
}
