//! Lines for the person at the terminal, on stderr, written without `eprintln!`: that panics
//! when stderr is closed (a supervisor's log pipe gone, a terminal closed), and a panic in the
//! task that prints would take down what it was doing, such as stopping on SIGTERM.

use std::fmt::Arguments;
use std::io::Write;

/// Write `line` and a newline to stderr. Nobody reading it any more is not an error: the line
/// is dropped.
pub(crate) fn line(line: Arguments<'_>) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_fmt(line)
        .and_then(|()| stderr.write_all(b"\n"));
}
