//! Writing results to stdout. A reader that goes away early (`pegboard tools | head -1`) is
//! not an error: the output was wanted only so far, so the command ends quietly.

use std::io::{ErrorKind, Write};

use anyhow::{Context, Result};

/// Write `text` to stdout and flush; a closed pipe counts as done.
///
/// # Errors
/// Any other write error (a full disk behind a redirect...).
pub fn print(text: &str) -> Result<()> {
    write_quietly(&mut std::io::stdout().lock(), text)
}

/// [`print`] with a line end.
///
/// # Errors
/// As [`print`].
pub fn println(text: &str) -> Result<()> {
    print(&format!("{text}\n"))
}

/// Write `text` to `out`, treating a broken pipe as the reader having read enough.
pub(crate) fn write_quietly(out: &mut impl Write, text: &str) -> Result<()> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone, as stdout behind `| head -1` after `head` exits.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("no space left"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_a_quiet_end_and_other_errors_are_reported() {
        assert!(write_quietly(&mut ClosedPipe, "x\n").is_ok());
        assert!(write_quietly(&mut Full, "x\n").is_err());
    }
}
