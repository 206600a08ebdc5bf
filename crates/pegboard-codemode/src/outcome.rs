//! What a run ends with: [`RunOutcome`], its value or [`RunError`].

use serde::Serialize;

use crate::host::CallRecord;

/// A run's end: its value or error, what it logged, the calls it made.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The returned value (as JSON text; `null` for `undefined`), or why there is none.
    pub result: Result<String, RunError>,
    /// What `console.*` printed, one line a call, capped at the output limit.
    pub log: String,
    /// Whether the log was cut at the cap.
    pub log_truncated: bool,
    /// The calls made, in the order they ended.
    pub calls: Vec<CallRecord>,
}

/// Where in the script an error happened (lines and columns count from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Position {
    /// The line.
    pub line: u32,
    /// The column.
    pub column: u32,
}

/// Why a run has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The script does not parse.
    #[error("SyntaxError: {message}{}", at(*position))]
    Syntax {
        /// The engine's message.
        message: String,
        /// Where.
        position: Option<Position>,
    },
    /// The script threw (or a promise it returned rejected) and nothing caught it.
    #[error("{message}{}", at(*position))]
    Thrown {
        /// `Name: message` of an Error, or the thrown value of anything else.
        message: String,
        /// Where, for an Error.
        position: Option<Position>,
    },
    /// The run took longer than `timeoutSecs`.
    #[error(
        "the script ran out of time: {secs} s is the most one run may take (codeMode.timeoutSecs); do less per run or call fewer tools one after another"
    )]
    Timeout {
        /// The limit.
        secs: u64,
    },
    /// The heap passed `memoryMib`.
    #[error(
        "the script ran out of memory: {mib} MiB is the most one run may use (codeMode.memoryMib); return less, or keep only what you need of each result"
    )]
    Memory {
        /// The limit.
        mib: u64,
    },
    /// Recursion too deep for the engine's stack.
    #[error(
        "the script recursed too deep (stack overflow){}: turn the recursion into a loop",
        at(*position)
    )]
    Stack {
        /// Where, if known.
        position: Option<Position>,
    },
    /// The script made more than `maxCalls` tool calls (and did not catch the error).
    #[error(
        "the script made {max} tool calls, the most one run may make (codeMode.maxCalls); make fewer calls per run"
    )]
    TooManyCalls {
        /// The limit.
        max: usize,
    },
    /// The returned value's JSON is longer than `maxOutputKib`.
    #[error(
        "the script returned {bytes} bytes of JSON, more than the {max} bytes one run may return (codeMode.maxOutputKib); return a summary instead"
    )]
    Output {
        /// Its length.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The script's promise never settles (it awaits something no call will resolve).
    #[error(
        "the script is waiting on a promise that nothing will settle (no tool call is in flight); await tool calls, not a promise you never resolve"
    )]
    Stalled,
    /// The run was cancelled by its caller.
    #[error("the run was cancelled")]
    Cancelled,
    /// The sandbox could not start (no thread, no engine).
    #[error("the code sandbox could not start: {0}")]
    Start(String),
}

fn at(position: Option<Position>) -> String {
    position.map_or_else(String::new, |p| {
        format!(" (line {}, column {})", p.line, p.column)
    })
}

impl RunError {
    /// Where the error happened, when the engine says.
    pub fn position(&self) -> Option<Position> {
        match self {
            RunError::Syntax { position, .. }
            | RunError::Thrown { position, .. }
            | RunError::Stack { position } => *position,
            _ => None,
        }
    }

    /// A short word for the kind (`syntax`, `thrown`, `timeout`, `memory`, `stack`,
    /// `max_calls`, `output`, `stalled`, `cancelled`, `start`).
    pub fn kind(&self) -> &'static str {
        match self {
            RunError::Syntax { .. } => "syntax",
            RunError::Thrown { .. } => "thrown",
            RunError::Timeout { .. } => "timeout",
            RunError::Memory { .. } => "memory",
            RunError::Stack { .. } => "stack",
            RunError::TooManyCalls { .. } => "max_calls",
            RunError::Output { .. } => "output",
            RunError::Stalled => "stalled",
            RunError::Cancelled => "cancelled",
            RunError::Start(_) => "start",
        }
    }
}
