//! A Prometheus histogram made of atomics: recording is two relaxed `fetch_add`s, no lock, so
//! concurrent calls never wait on each other and no count is lost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bucket bounds (seconds) of the operation durations: the conventions' advice for
/// `mcp.*.operation.duration` (`0.01` .. `300`), with four finer buckets below 10 ms where a
/// gateway's own answers (lists, cached results) fall.
pub const OPERATION_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

/// Bucket bounds (seconds) of session durations: a second to a day.
pub const SESSION_BUCKETS: &[f64] = &[
    1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 86400.0,
];

/// Slots of the widest histogram: [`OPERATION_BOUNDS_NS`]' bounds and `+Inf`.
const SLOTS: usize = OPERATION_BOUNDS_NS.len() + 1;
const _: () = assert!(SESSION_BOUNDS_NS.len() < SLOTS);

/// One histogram series: per-bucket counts (not cumulative; summed when encoded), the sum in
/// nanoseconds.
///
/// Its counts are inline, the sum first and the smallest buckets next to it: an observation of
/// a fast operation (the common one) reads and writes one cache line beside the bounds' first,
/// where a boxed slice cost a call one line more, missed whenever other work ran in between.
#[derive(Debug)]
#[repr(C)]
pub struct AtomicHistogram {
    bounds_ns: &'static [u64],
    bounds_s: &'static [f64],
    /// The sum in nanoseconds, then `bounds.len() + 1` bucket counts, the last one `+Inf`
    /// (slots past those stay zero).
    cells: [AtomicU64; SLOTS + 1],
}

/// A set of bounds in both units, made once per histogram kind.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Upper bounds in nanoseconds (for recording: integer compares only).
    pub ns: &'static [u64],
    /// The same in seconds (for encoding).
    pub s: &'static [f64],
}

/// [`OPERATION_BUCKETS`] in nanoseconds.
pub const OPERATION_BOUNDS_NS: &[u64] = &[
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
    120_000_000_000,
    300_000_000_000,
];

/// [`SESSION_BUCKETS`] in nanoseconds.
pub const SESSION_BOUNDS_NS: &[u64] = &[
    1_000_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
    300_000_000_000,
    600_000_000_000,
    1_800_000_000_000,
    3_600_000_000_000,
    7_200_000_000_000,
    14_400_000_000_000,
    28_800_000_000_000,
    86_400_000_000_000,
];

/// Operation durations.
pub const OPERATION: Bounds = Bounds {
    ns: OPERATION_BOUNDS_NS,
    s: OPERATION_BUCKETS,
};

/// Session durations.
pub const SESSION: Bounds = Bounds {
    ns: SESSION_BOUNDS_NS,
    s: SESSION_BUCKETS,
};

/// What a scrape reads of one histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// Sum of the observations, seconds.
    pub sum: f64,
    /// Number of observations (the `+Inf` bucket).
    pub count: u64,
    /// `(upper bound, count in that bucket)` (not cumulative: the encoder sums them), the last
    /// bound infinite (`+Inf`).
    pub buckets: Vec<(f64, u64)>,
}

impl AtomicHistogram {
    /// An empty histogram over `bounds`.
    #[must_use]
    pub fn new(bounds: Bounds) -> Self {
        Self {
            bounds_ns: bounds.ns,
            bounds_s: bounds.s,
            cells: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The bucket counts (`bounds.len() + 1` of them).
    fn buckets(&self) -> &[AtomicU64] {
        self.cells
            .get(1..=self.bounds_ns.len() + 1)
            .unwrap_or_default()
    }

    /// Count one observation of `elapsed`.
    #[inline]
    pub fn observe(&self, elapsed: Duration) {
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        // From the smallest bound up (not a binary search): most observations are in the
        // first buckets, and this reads the bounds' first line only.
        let slot = self
            .bounds_ns
            .iter()
            .take_while(|&&bound| bound < ns)
            .count();
        if let Some(bucket) = self.cells.get(slot + 1) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(sum) = self.cells.first() {
            sum.fetch_add(ns, Ordering::Relaxed);
        }
    }

    /// Observations so far.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.buckets()
            .iter()
            .fold(0u64, |n, b| n.saturating_add(b.load(Ordering::Relaxed)))
    }

    /// The counts as a scrape shows them; `count` is the sum of the buckets read, so the
    /// `+Inf` bucket and `_count` always agree even while calls are recorded.
    #[must_use]
    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut total = 0u64;
        let mut buckets = Vec::with_capacity(self.bounds_ns.len() + 1);
        for (i, bucket) in self.buckets().iter().enumerate() {
            let n = bucket.load(Ordering::Relaxed);
            total = total.saturating_add(n);
            let bound = self.bounds_s.get(i).copied().unwrap_or(f64::INFINITY);
            buckets.push((bound, n));
        }
        #[allow(clippy::cast_precision_loss)] // seconds as f64: exact to the ns for 104 days
        let sum = self.cells.first().map_or(0, |s| s.load(Ordering::Relaxed)) as f64 / 1e9;
        HistogramSnapshot {
            sum,
            count: total,
            buckets,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_agree_in_both_units() {
        for b in [OPERATION, SESSION] {
            assert_eq!(b.ns.len(), b.s.len());
            for (ns, s) in b.ns.iter().zip(b.s) {
                #[allow(clippy::cast_precision_loss)]
                let from_ns = *ns as f64 / 1e9;
                assert!((from_ns - s).abs() < 1e-12, "{ns} ns vs {s} s");
            }
            assert!(b.ns.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn an_observation_lands_in_the_first_bucket_whose_bound_it_does_not_exceed() {
        let h = AtomicHistogram::new(OPERATION);
        h.observe(Duration::from_micros(500)); // exactly on 0.0005: le="0.0005"
        h.observe(Duration::from_micros(501));
        h.observe(Duration::from_secs(1000)); // over every bound: +Inf only
        let s = h.snapshot();
        assert_eq!(s.count, 3);
        assert_eq!(s.buckets[0], (0.0005, 1));
        assert_eq!(s.buckets[1], (0.001, 1));
        assert_eq!(s.buckets[OPERATION.s.len() - 1].1, 0);
        assert_eq!(s.buckets.last(), Some(&(f64::INFINITY, 1)));
        assert!((s.sum - 1_000.001_001).abs() < 1e-9);
    }

    #[test]
    fn a_histogram_with_fewer_bounds_uses_only_its_own_slots() {
        let h = AtomicHistogram::new(SESSION);
        h.observe(Duration::from_millis(10)); // under the first bound: le="1"
        h.observe(Duration::from_secs(100_000)); // over the last (a day): +Inf
        let s = h.snapshot();
        assert_eq!(s.buckets.len(), SESSION.s.len() + 1);
        assert_eq!(s.buckets[0], (1.0, 1));
        assert_eq!(s.buckets.last(), Some(&(f64::INFINITY, 1)));
        assert_eq!((s.count, h.count()), (2, 2));
    }
}
