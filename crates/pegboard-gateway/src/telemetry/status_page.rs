//! The status page: one self-contained HTML document (inline CSS, no script, no external
//! asset), refreshed by the browser every 10 seconds. Every value from a config or a server is
//! escaped.

use std::fmt::Write as _;

use super::status::StatusReport;

/// `text` with HTML's special characters escaped (for element content and quoted attributes).
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "\
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2rem auto;max-width:64rem;padding:0 1rem;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4rem;margin:0 0 .25rem}
p.meta{color:#555;margin:0 0 1.25rem}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 1px 3px #0002}
th,td{padding:.5rem .75rem;text-align:left;border-bottom:1px solid #e5e5e5;vertical-align:top}
th{background:#f0f0f2;font-weight:600;font-size:.85rem;text-transform:uppercase;letter-spacing:.03em;color:#444}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.state{display:inline-block;padding:.1rem .55rem;border-radius:1rem;font-size:.85rem;font-weight:600}
.up{background:#d9f5e1;color:#11632d}.starting,.restarting{background:#fff1c9;color:#7a5300}
.needs_login{background:#dfe9ff;color:#1c3f94}.failed{background:#ffdede;color:#9b1c1c}.stopped{background:#eee;color:#555}
.why{color:#555;font-size:.85rem;margin-top:.2rem;white-space:pre-wrap}.failed~.why{color:#9b1c1c}
footer{color:#777;font-size:.8rem;margin-top:1rem}";

fn ms(value: Option<f64>) -> String {
    match value {
        None => "–".to_string(),
        Some(v) if v < 10.0 => format!("{v:.2} ms"),
        Some(v) if v < 1000.0 => format!("{v:.0} ms"),
        Some(v) => format!("{:.1} s", v / 1000.0),
    }
}

/// The page for `report`.
#[must_use]
pub fn render(report: &StatusReport) -> String {
    let mut page = String::with_capacity(4096 + report.servers.len() * 512);
    let up = report.servers.iter().filter(|s| s.state == "up").count();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta http-equiv=\"refresh\" content=\"10\">\
         <title>PegBoard status</title><style>{STYLE}</style></head><body>\
         <h1>PegBoard status</h1>\
         <p class=\"meta\" id=\"summary\">{up} of {total} servers up · {sessions} sessions · \
         {in_flight} requests in flight · counts over the last {minutes} minutes</p>",
        total = report.servers.len(),
        sessions = report.sessions,
        in_flight = report.calls_in_flight,
        minutes = report.window_seconds / 60,
    );
    page.push_str(
        "<table id=\"servers\"><thead><tr><th>Server</th><th>State</th><th>Tools</th>\
         <th>Restarts</th><th>Calls</th><th>Errors</th><th>p50</th><th>p99</th></tr></thead><tbody>",
    );
    if report.servers.is_empty() {
        page.push_str("<tr><td colspan=\"8\">No servers configured.</td></tr>");
    }
    for s in &report.servers {
        let state = escape(&s.state);
        let label = state.replace('_', " ");
        let why = s
            .reason
            .as_deref()
            .map(|r| format!("<div class=\"why\">{}</div>", escape(r)))
            .unwrap_or_default();
        let _ = write!(
            page,
            "<tr data-server=\"{name}\"><td>{name}</td>\
             <td><span class=\"state {state}\">{label}</span>{why}</td>\
             <td class=\"n\">{tools}</td><td class=\"n\">{restarts}</td>\
             <td class=\"n\">{calls}</td><td class=\"n\">{errors}</td>\
             <td class=\"n\">{p50}</td><td class=\"n\">{p99}</td></tr>",
            name = escape(&s.name),
            tools = s.tools,
            restarts = s.restarts,
            calls = s.calls,
            errors = s.errors,
            p50 = ms(s.p50_ms),
            p99 = ms(s.p99_ms),
        );
    }
    let tracing = if report.exporting_spans {
        format!(
            "spans exported over OTLP ({} dropped)",
            report.spans_dropped
        )
    } else {
        "spans not exported".to_string()
    };
    let _ = writeln!(
        page,
        "</tbody></table><footer>PegBoard {version} · up {uptime} · {tracing} · \
         metrics at <a href=\"/metrics\">/metrics</a>, this page as JSON with \
         <code>Accept: application/json</code></footer></body></html>",
        version = escape(&report.version),
        uptime = uptime(report.uptime_seconds),
    );
    page
}

fn uptime(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::status::ServerStatus;

    #[test]
    fn hostile_names_and_reasons_are_escaped() {
        let report = StatusReport {
            version: "0.1.0".into(),
            uptime_seconds: 3700,
            window_seconds: 300,
            sessions: 1,
            calls_in_flight: 0,
            exporting_spans: false,
            spans_dropped: 0,
            servers: vec![ServerStatus {
                name: "<script>alert(1)</script>".into(),
                state: "failed".into(),
                reason: Some("exit 1: \"x\" & <y> 'z'".into()),
                tools: 0,
                restarts: 2,
                calls: 0,
                errors: 0,
                p50_ms: None,
                p99_ms: None,
            }],
        };
        let page = render(&report);
        assert!(!page.contains("<script>"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("exit 1: &quot;x&quot; &amp; &lt;y&gt; &#39;z&#39;"));
        assert!(page.contains("1 h 1 min"));
        assert!(!page.contains("src=") && !page.contains("<link"));
    }
}
