//! Where audit lines go: a file opened for appending (reopened on request, for logrotate), or
//! stderr. Each batch of whole lines is one `write_all`, so lines never interleave.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The audit log's destination (`--audit-log PATH`, or `-` for stderr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditTarget {
    /// Standard error (`-`), shared with the logs: each line is written under stderr's lock.
    Stderr,
    /// A file, created if missing, appended to.
    File(PathBuf),
}

impl AuditTarget {
    /// `-` is stderr, anything else a file path.
    ///
    /// ```
    /// use pegboard_gateway::audit::AuditTarget;
    /// assert_eq!(AuditTarget::parse("-"), AuditTarget::Stderr);
    /// assert_eq!(AuditTarget::parse("/var/log/pegboard/audit.jsonl"), AuditTarget::File("/var/log/pegboard/audit.jsonl".into()));
    /// ```
    pub fn parse(arg: &str) -> Self {
        if arg == "-" {
            AuditTarget::Stderr
        } else {
            AuditTarget::File(PathBuf::from(arg))
        }
    }
}

impl std::fmt::Display for AuditTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuditTarget::Stderr => f.write_str("stderr"),
            AuditTarget::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The open destination.
pub(crate) enum Sink {
    Stderr,
    File { path: PathBuf, file: File },
}

impl Sink {
    pub(crate) fn open(target: &AuditTarget) -> io::Result<Self> {
        match target {
            AuditTarget::Stderr => Ok(Sink::Stderr),
            AuditTarget::File(path) => Ok(Sink::File {
                file: open_append(path)?,
                path: path.clone(),
            }),
        }
    }

    /// Write whole lines.
    pub(crate) fn write(&mut self, lines: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stderr => {
                let mut err = io::stderr().lock();
                err.write_all(lines)?;
                err.flush()
            }
            Sink::File { file, .. } => file.write_all(lines),
        }
    }

    /// Open the file again at its path (after logrotate moved it). On failure the old handle
    /// is kept, so nothing is lost.
    pub(crate) fn reopen(&mut self) -> io::Result<()> {
        if let Sink::File { path, file } = self {
            *file = open_append(path)?;
        }
        Ok(())
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}
