//! The CPU time a front's process spends, read from `/proc`: a figure of what the gateway
//! itself costs per call that the machine's scheduling noise barely moves (a call's latency
//! swings by tens of µs between rounds here; the CPU it costs does not).

use std::path::Path;

/// CPU time (user and system, ns) that process `pid` has run so far, over all its threads
/// (`/proc/PID/task/*/schedstat`; a thread that exits between two reads takes its time with it:
/// the fronts measured keep theirs). `None` where `/proc` does not have it (not Linux).
pub fn process_cpu_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(Path::new("/proc").join(pid.to_string()).join("task")).ok()?;
    let mut total = 0u64;
    for task in tasks.flatten() {
        // Gone since the listing: nothing to add.
        if let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) {
            total += first_field(&stat)?;
        }
    }
    Some(total)
}

/// The first number of a `schedstat` line (time on the CPU, ns).
fn first_field(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().next()?.parse().ok()
}

/// Reads a front's CPU time around a measured run.
#[derive(Debug, Clone, Copy)]
pub struct Probe(Option<u32>);

impl Probe {
    /// The probe of process `pid` (`None`: no figure).
    pub fn of(pid: Option<u32>) -> Self {
        Self(pid)
    }

    /// The CPU time so far, if it can be read.
    pub fn read(self) -> Option<u64> {
        process_cpu_ns(self.0?)
    }

    /// The CPU time since `before` (a [`Probe::read`] of the same probe).
    pub fn since(self, before: Option<u64>) -> Option<u64> {
        Some(self.read()?.saturating_sub(before?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_lines_give_their_first_number() {
        assert_eq!(first_field("123456 789 10\n"), Some(123_456));
        assert_eq!(first_field(""), None);
        assert_eq!(first_field("x 1 2"), None);
    }

    #[test]
    fn this_process_has_spent_cpu_and_keeps_spending_it() {
        let me = Probe::of(Some(std::process::id()));
        let before = me.read();
        assert!(before.is_some_and(|ns| ns > 0), "{before:?}");
        // Work the probe must see: hashing a buffer until the CPU clock moves.
        let mut x = 0u64;
        let mut spent = 0;
        while spent == 0 {
            for i in 0..100_000u64 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i);
            }
            spent = me.since(before).unwrap_or(0);
        }
        assert!(x != 1 && spent > 0);
        assert_eq!(Probe::of(None).read(), None);
    }
}
