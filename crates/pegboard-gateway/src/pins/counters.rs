//! Process-wide counters of what the pins and the description scan did, for the metrics exporter
//! (`pegboard_pins_total{kind,action}`, `pegboard_guard_findings_total{marker}` or the like).
//! Each counts news, not listings: a tool hidden at one listing and still hidden at the next
//! counts once.

use std::sync::atomic::{AtomicU64, Ordering};

use super::lock::Kind;
use super::status::Action;
use crate::guards::scan::Marker;

/// The counters (one set per process).
#[derive(Debug, Default)]
pub struct Counters {
    tools_warned: AtomicU64,
    tools_hidden: AtomicU64,
    prompts_warned: AtomicU64,
    prompts_hidden: AtomicU64,
    findings: [AtomicU64; Marker::ALL.len()],
}

/// The values at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterValues {
    /// Tools listed with a warning (changed since pinned, `onChange: warn`).
    pub tools_warned: u64,
    /// Tools kept off the board.
    pub tools_hidden: u64,
    /// Prompts listed with a warning.
    pub prompts_warned: u64,
    /// Prompts kept off the board.
    pub prompts_hidden: u64,
    /// Scan findings, by marker, in [`Marker::ALL`] order.
    pub findings: Vec<(Marker, u64)>,
    /// Tool results cut at their server's cap (counted by `crate::guards::caps`).
    pub results_cut: u64,
    /// Tool results refused (structured content over the cap).
    pub results_refused: u64,
}

static COUNTERS: std::sync::LazyLock<Counters> = std::sync::LazyLock::new(Counters::default);

/// The process's counters.
pub fn counters() -> &'static Counters {
    &COUNTERS
}

impl Counters {
    /// Count one warned or hidden item.
    pub fn action(&self, kind: Kind, action: Action) {
        let counter = match (kind, action) {
            (_, Action::Keep) => return,
            (Kind::Tool, Action::Warn) => &self.tools_warned,
            (Kind::Tool, Action::Hide) => &self.tools_hidden,
            (Kind::Prompt, Action::Warn) => &self.prompts_warned,
            (Kind::Prompt, Action::Hide) => &self.prompts_hidden,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Count one scan finding.
    pub fn finding(&self, marker: Marker) {
        if let Some(at) = Marker::ALL.iter().position(|m| *m == marker)
            && let Some(counter) = self.findings.get(at)
        {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The values now.
    pub fn values(&self) -> CounterValues {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CounterValues {
            tools_warned: load(&self.tools_warned),
            tools_hidden: load(&self.tools_hidden),
            prompts_warned: load(&self.prompts_warned),
            prompts_hidden: load(&self.prompts_hidden),
            findings: Marker::ALL
                .iter()
                .zip(&self.findings)
                .map(|(m, c)| (*m, load(c)))
                .collect(),
            results_cut: crate::guards::caps::cut_count(),
            results_refused: crate::guards::caps::refused_count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up() {
        let c = Counters::default();
        c.action(Kind::Tool, Action::Hide);
        c.action(Kind::Tool, Action::Keep);
        c.action(Kind::Prompt, Action::Warn);
        c.finding(Marker::ModelTag);
        let v = c.values();
        assert_eq!(
            (v.tools_hidden, v.tools_warned, v.prompts_warned),
            (1, 0, 1)
        );
        assert_eq!(v.findings[3], (Marker::ModelTag, 1));
    }
}
