//! What the pins and the description scan found, on stderr (stdout holds the tool list): for
//! `pegboard tools`.

use pegboard::PegBoard;
use pegboard_gateway::guards::{board_tools, other_server_mentions};
use pegboard_gateway::pins::Report;
use pegboard_gateway::pins::policy::{Action, Status};

/// Print the hidden and warned tools and every scan finding of `reports` (one per server entry)
/// and of the board as a whole; returns how many findings there were.
pub fn print(board: &PegBoard, reports: &[(String, Report)]) -> usize {
    let mut findings = Vec::new();
    for (server, report) in reports {
        for verdict in report.verdicts() {
            let name = &verdict.board_name;
            match (verdict.status, verdict.action) {
                (_, Action::Hide) => eprintln!(
                    "pegboard: {server}: {}",
                    pegboard_gateway::pins::filter::hidden_reason(
                        verdict.kind,
                        verdict.status,
                        name
                    )
                ),
                (Status::Changed, _) => eprintln!(
                    "pegboard: {server}: {} `{name}` changed since it was pinned (listed: onChange is warn)",
                    verdict.kind.as_str()
                ),
                _ => {}
            }
            findings.extend(verdict.findings);
        }
    }
    findings.extend(other_server_mentions(&board_tools(board)));
    if !findings.is_empty() {
        eprintln!(
            "pegboard: the description scan (heuristics) flagged {} thing{} to review:",
            findings.len(),
            if findings.len() == 1 { "" } else { "s" }
        );
        for finding in &findings {
            eprintln!("  {finding}");
        }
    }
    findings.len()
}
