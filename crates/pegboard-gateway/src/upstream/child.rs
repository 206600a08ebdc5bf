//! The transport to a stdio server: its stdin and stdout as rmcp's line transport, with the
//! stdout read through [`LimitedLines`] (rmcp's `TokioChildProcess` keeps stdout to itself, so it
//! cannot be used with a reader of our own in front).
//!
//! It keeps what `TokioChildProcess` did: the child is killed when the transport is dropped, and
//! closing it is the MCP stdio shutdown (close stdin, wait, SIGTERM, wait, kill).

use std::borrow::Cow;
use std::process::Stdio;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use std::sync::Arc;

use super::lane::Lane;
use crate::io::limit::LimitedLines;
use crate::io::writer::{self, SharedWriter};

/// How long a child may take to exit after stdin closes, then after SIGTERM (as rmcp does).
const EXIT_WAIT: Duration = Duration::from_secs(3);
/// Room above the message limit in rmcp's own line cap: the error lines put in place of an
/// oversized message are small, and every other line is within the limit.
const RMCP_CAP_SLACK: usize = 64 * 1024;

/// A started stdio server, as an rmcp client transport.
pub(crate) struct ChildTransport {
    io: AsyncRwTransport<RoleClient, LimitedLines<ChildStdout>, SharedWriter<ChildStdin>>,
    child: Option<Child>,
    lane: Arc<Lane>,
}

impl std::fmt::Debug for ChildTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildTransport")
            .field("pid", &self.child.as_ref().and_then(Child::id))
            .finish_non_exhaustive()
    }
}

/// Start `cmd` with piped stdio; messages on its stdout over `max_message` bytes are replaced by
/// errors naming `server` (see [`LimitedLines`]); the others are shown to `tap`. Returns the transport and the child's stderr.
///
/// # Errors
/// The program could not be started.
pub(crate) fn spawn(
    mut cmd: Command,
    max_message: usize,
    server: &str,
    tap: pegboard::ToolListTap,
) -> std::io::Result<(ChildTransport, ChildStderr)> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(std::io::Error::other("the child's stdio was not piped"));
    };
    crate::io::pipe::widen(&stdout);
    let (stdin, lane_stdin) = writer::share(stdin);
    let lane = Arc::new(Lane::new(lane_stdin));
    let stdout = LimitedLines::new(stdout, max_message, server)
        .with_divert(Arc::clone(&lane) as Arc<dyn crate::io::limit::Divert>)
        .with_tap(tap);
    let io = AsyncRwTransport::new_client(stdout, stdin)
        .with_max_line_length(max_message.saturating_add(RMCP_CAP_SLACK));
    Ok((
        ChildTransport {
            io,
            child: Some(child),
            lane,
        },
        stderr,
    ))
}

impl ChildTransport {
    /// The connection's express lane (see [`super::lane`]).
    pub(crate) fn lane(&self) -> Arc<Lane> {
        Arc::clone(&self.lane)
    }

    /// The MCP stdio shutdown: close stdin and wait for the child to exit; then SIGTERM it and
    /// wait again; then kill it.
    async fn shut_down(&mut self) -> std::io::Result<()> {
        self.io.close().await?;
        // rmcp dropped its handle to stdin; the lane's goes too, so the child sees the end.
        self.lane.close_stdin().await;
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        if exited_within(child, EXIT_WAIT).await? {
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
            use nix::sys::signal::{Signal, kill};
            match kill(nix::unistd::Pid::from_raw(pid), Signal::SIGTERM) {
                Ok(()) if exited_within(child, EXIT_WAIT).await? => {
                    self.child = None;
                    return Ok(());
                }
                Ok(()) => {}
                Err(e) => tracing::debug!(pid, "cannot send SIGTERM: {e}"),
            }
        }
        child.kill().await?;
        self.child = None;
        Ok(())
    }
}

async fn exited_within(child: &mut Child, wait: Duration) -> std::io::Result<bool> {
    match tokio::time::timeout(wait, child.wait()).await {
        Ok(status) => status.map(|_| true),
        Err(_) => Ok(false),
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        Cow::Borrowed("stdio child process")
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.io.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.io.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shut_down()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn closing_gives_the_child_the_end_of_its_stdin() -> std::io::Result<()> {
        // The express lane holds the stdin too; closing must still end it for the child, which
        // then finishes by itself (a SIGTERM would kill `sh` before it writes the file).
        let dir = tempfile::tempdir()?;
        let done = dir.path().join("done");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("cat > /dev/null; echo eof > '{}'", done.display()));
        let (mut transport, _stderr) = spawn(cmd, 1024, "eof", pegboard::ToolListTap::new())?;
        let lane = transport.lane();
        Transport::close(&mut transport).await?;
        assert_eq!(std::fs::read_to_string(&done)?, "eof\n");
        drop(lane);
        Ok(())
    }

    #[tokio::test]
    async fn closing_ends_a_child_that_ignores_its_stdin_closing() -> std::io::Result<()> {
        // `sleep` never reads stdin: only the SIGTERM after the first wait ends it.
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let (mut transport, _stderr) = spawn(cmd, 1024, "sleepy", pegboard::ToolListTap::new())?;
        let pid = transport.child.as_ref().and_then(Child::id);
        assert!(pid.is_some());
        Transport::close(&mut transport).await?;
        assert!(transport.child.is_none(), "the child was waited for");
        Ok(())
    }
}
