//! Rows of results: percentiles, ratios to the direct run, and the table / JSON output.

use serde::Serialize;

use crate::rpc::Samples;

/// One measured run.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The backend (and the operation, for tools/list).
    pub backend: String,
    /// `direct`, `stdio` (through `pegboard serve`), `http` (through `pegboard serve --http`), or a peer.
    pub front: String,
    /// Requests in flight.
    pub concurrency: usize,
    /// Measured calls.
    pub calls: usize,
    /// Calls per second over the measured part.
    pub calls_per_s: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
    /// This row's calls/s over the direct row's (same backend, same concurrency).
    pub ratio: Option<f64>,
    /// This row's p50 minus the direct row's, µs.
    pub added_p50_us: Option<f64>,
    /// Calls that answered with an error.
    pub errors: u64,
    /// CPU time the front's own process spent per measured call, µs (the backend's, for the
    /// direct row; a gateway's or relay's own, without its backend's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_call: Option<f64>,
    /// The lowest and highest of `cpu_us_per_call` over the rounds (with `--rounds` over 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_call_range: Option<(f64, f64)>,
    /// This row's `cpu_us_per_call` minus that of the row it is compared with (see
    /// [`paired`]), taken within each round, then the median over the rounds: a difference
    /// that drifts less with the machine than the difference of two medians.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_delta_us: Option<f64>,
    /// The front `cpu_delta_us` is taken against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_delta_against: Option<String>,
    /// The first error's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// The nearest-rank percentile `p` (0..=100) of sorted values.
fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    // Precision loss converting counts to f64 is irrelevant at these sizes.
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

impl Row {
    /// Summarise `samples`; `direct` is the row to compare with (none for the direct row itself).
    pub fn new(
        backend: &str,
        front: &str,
        concurrency: usize,
        mut samples: Samples,
        direct: Option<&Row>,
    ) -> Self {
        samples.latencies_ns.sort_unstable();
        let calls = samples.latencies_ns.len();
        #[allow(clippy::cast_precision_loss)]
        let calls_per_s = calls as f64 / samples.elapsed.as_secs_f64().max(1e-9);
        let p50_us = percentile(&samples.latencies_ns, 50.0) / 1000.0;
        let p99_us = percentile(&samples.latencies_ns, 99.0) / 1000.0;
        #[allow(clippy::cast_precision_loss)]
        let cpu_us_per_call = samples
            .cpu_ns
            .filter(|_| calls > 0)
            .map(|ns| ns as f64 / calls as f64 / 1000.0);
        Self {
            backend: backend.to_owned(),
            front: front.to_owned(),
            concurrency,
            calls,
            calls_per_s,
            p50_us,
            p99_us,
            ratio: direct.map(|d| calls_per_s / d.calls_per_s),
            added_p50_us: direct.map(|d| p50_us - d.p50_us),
            errors: samples.errors,
            cpu_us_per_call,
            cpu_us_per_call_range: None,
            cpu_delta_us: None,
            cpu_delta_against: None,
            first_error: samples.first_error,
        }
    }
}

/// The front a front's CPU is compared with, in the same round: a `+metrics` or `+traces`
/// front against the same front without telemetry; a front against itself in the
/// `--pegboard-before` build (`(before)`).
fn partner(front: &str) -> Option<String> {
    use clap::ValueEnum;
    for telemetry in crate::Telemetry::value_variants() {
        let suffix = telemetry.suffix();
        if let Some(base) = front.strip_suffix(suffix).filter(|_| !suffix.is_empty()) {
            return Some(base.to_owned());
        }
    }
    (!front.ends_with(')')).then(|| format!("{front}{BEFORE}"))
}

/// What a front's label gets when it is the `--pegboard-before` build.
pub const BEFORE: &str = " (before)";

/// Set each row's CPU difference against its partner in `round` (one round's rows of one
/// backend and concurrency), where both were measured.
pub fn paired(round: &mut [Row]) {
    let cpu_of: Vec<(String, Option<f64>)> = round
        .iter()
        .map(|r| (r.front.clone(), r.cpu_us_per_call))
        .collect();
    for row in round.iter_mut() {
        let Some(against) = partner(&row.front) else {
            continue;
        };
        let theirs = cpu_of
            .iter()
            .find(|(front, _)| *front == against)
            .and_then(|(_, cpu)| *cpu);
        if let (Some(mine), Some(theirs)) = (row.cpu_us_per_call, theirs) {
            row.cpu_delta_us = Some(mine - theirs);
            row.cpu_delta_against = Some(against);
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => f64::midpoint(values[n / 2 - 1], values[n / 2]),
    }
}

/// The lowest and highest of `values` (`None` when there are none).
fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

impl Row {
    /// One row for several rounds of the same front: each column's median over the rounds
    /// (× and +p50 were taken within each round, against that round's direct row); calls and
    /// errors summed. `None` for no rounds.
    pub fn median(rounds: &[Row]) -> Option<Row> {
        let first = rounds.first()?;
        if rounds.len() == 1 {
            return Some(first.clone());
        }
        let of = |f: fn(&Row) -> f64| median(rounds.iter().map(f).collect());
        let of_some = |f: fn(&Row) -> Option<f64>| {
            let values: Vec<f64> = rounds.iter().filter_map(f).collect();
            (!values.is_empty()).then(|| median(values))
        };
        Some(Row {
            backend: first.backend.clone(),
            front: first.front.clone(),
            concurrency: first.concurrency,
            calls: rounds.iter().map(|r| r.calls).sum(),
            calls_per_s: of(|r| r.calls_per_s),
            p50_us: of(|r| r.p50_us),
            p99_us: of(|r| r.p99_us),
            ratio: of_some(|r| r.ratio),
            added_p50_us: of_some(|r| r.added_p50_us),
            errors: rounds.iter().map(|r| r.errors).sum(),
            cpu_us_per_call: of_some(|r| r.cpu_us_per_call),
            cpu_us_per_call_range: range(rounds.iter().filter_map(|r| r.cpu_us_per_call)),
            cpu_delta_us: of_some(|r| r.cpu_delta_us),
            cpu_delta_against: first.cpu_delta_against.clone(),
            first_error: rounds.iter().find_map(|r| r.first_error.clone()),
        })
    }
}

/// The rows as an aligned Markdown table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| backend | front | in flight | calls | calls/s | p50 µs | p99 µs | × direct | +p50 µs | cpu µs/call | cpu Δ µs (paired) | errors |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let ratio = r.ratio.map_or("—".into(), |x| format!("{x:.2}"));
        let added = r.added_p50_us.map_or("—".into(), |x| format!("{x:+.0}"));
        let cpu = match (r.cpu_us_per_call, r.cpu_us_per_call_range) {
            (None, _) => "—".into(),
            (Some(x), None) => format!("{x:.1}"),
            (Some(x), Some((lo, hi))) => format!("{x:.1} ({lo:.1}–{hi:.1})"),
        };
        let delta = match (r.cpu_delta_us, &r.cpu_delta_against) {
            (Some(d), Some(against)) => format!("{d:+.1} vs {against}"),
            _ => "—".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {:.0} | {:.0} | {} | {} | {} | {} | {} |\n",
            r.backend,
            r.front,
            r.concurrency,
            r.calls,
            r.calls_per_s,
            r.p50_us,
            r.p99_us,
            ratio,
            added,
            cpu,
            delta,
            r.errors
        ));
    }
    for r in rows.iter().filter(|r| r.first_error.is_some()) {
        out.push_str(&format!(
            "\n{} via {} at {}: first error: {}",
            r.backend,
            r.front,
            r.concurrency,
            r.first_error.as_deref().unwrap_or_default()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(calls_per_s: f64, p50_us: f64, ratio: Option<f64>) -> Row {
        Row {
            backend: "b".into(),
            front: "f".into(),
            concurrency: 1,
            calls: 10,
            calls_per_s,
            p50_us,
            p99_us: p50_us * 2.0,
            ratio,
            added_p50_us: ratio.map(|r| r * 10.0),
            errors: 1,
            cpu_us_per_call: ratio.map(|r| r * 100.0),
            cpu_us_per_call_range: None,
            cpu_delta_us: None,
            cpu_delta_against: None,
            first_error: None,
        }
    }

    #[test]
    fn rounds_summarise_to_medians_of_each_column() {
        let rounds = [
            row(100.0, 50.0, Some(0.5)),
            row(300.0, 10.0, Some(0.9)),
            row(200.0, 30.0, Some(0.7)),
        ];
        let m = Row::median(&rounds).unwrap();
        assert_eq!((m.calls_per_s, m.p50_us, m.p99_us), (200.0, 30.0, 60.0));
        assert_eq!((m.ratio, m.added_p50_us), (Some(0.7), Some(7.0)));
        assert_eq!((m.calls, m.errors), (30, 3));
        assert_eq!(m.cpu_us_per_call, Some(70.0));
        assert_eq!(m.cpu_us_per_call_range, Some((50.0, 90.0)));
        let even = Row::median(&rounds[..2]).unwrap();
        assert_eq!(even.p50_us, 30.0);
        let direct = Row::median(&[row(1.0, 1.0, None), row(3.0, 3.0, None)]).unwrap();
        assert_eq!((direct.ratio, direct.p50_us), (None, 2.0));
        assert!(Row::median(&[]).is_none());
    }

    #[test]
    fn cpu_is_paired_within_a_round_then_summarised() {
        let named = |front: &str, cpu: f64| Row {
            front: front.into(),
            cpu_us_per_call: Some(cpu),
            ..row(1.0, 1.0, Some(1.0))
        };
        // Two rounds where the machine drifts by 10 µs between them: the paired difference
        // stays what each round measured.
        let mut rounds = [
            vec![
                named("http (before)", 32.0),
                named("http", 30.0),
                named("http +metrics", 30.5),
                named("stdio", 15.0),
            ],
            vec![
                named("http (before)", 42.0),
                named("http", 40.0),
                named("http +metrics", 40.7),
                named("stdio", 25.0),
            ],
        ];
        for round in &mut rounds {
            paired(round);
        }
        let of = |i: usize| Row::median(&[rounds[0][i].clone(), rounds[1][i].clone()]).unwrap();
        assert_eq!(of(0).cpu_delta_us, None, "nothing to compare (before) with");
        assert_eq!(of(1).cpu_delta_us, Some(-2.0));
        assert_eq!(of(1).cpu_delta_against.as_deref(), Some("http (before)"));
        let metrics = of(2);
        assert!((metrics.cpu_delta_us.unwrap() - 0.6).abs() < 1e-9);
        assert_eq!(metrics.cpu_delta_against.as_deref(), Some("http"));
        assert_eq!(of(3).cpu_delta_us, None, "no stdio (before) in the round");
        assert!(table(&[metrics]).contains("+0.6 vs http"));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[7], 99.0), 7.0);
    }
}
