//! One pipe written by two parties, a line at a time: rmcp's transport and the express lane.
//!
//! [`SharedWriter`] is the [`AsyncWrite`] handed to rmcp; [`LineSink`] writes whole lines from the
//! express lane. Both take the same async lock, and rmcp's side holds it from the first byte of
//! a message to its newline, so a message is never cut by another (a pipe write is atomic only
//! up to 4 KiB).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Buf;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The writer, until rmcp's side shuts it down (then it is dropped, closing the pipe: a child
/// reading its stdin sees the end only when every handle to it is gone).
type Slot<W> = Option<W>;
type Acquire<W> = Pin<Box<dyn Future<Output = OwnedMutexGuard<Slot<W>>> + Send>>;

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the pipe was closed")
}

/// The express lane's end of a shared pipe: writes whole lines.
#[derive(Debug)]
pub struct LineSink<W> {
    inner: Arc<Mutex<Slot<W>>>,
}

impl<W> Clone for LineSink<W> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<W: AsyncWrite + Unpin> LineSink<W> {
    /// Write `line` (which ends with a newline) in one piece, between rmcp's messages.
    pub async fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        self.write_parts(line, &[]).await
    }

    /// Write one line given in two parts (`tail` ends with a newline), between rmcp's messages:
    /// in one `writev` where the writer takes vectored writes and has room, since a reader woken
    /// by `head` alone would wait for the rest (for a 0.3 MB `tools/list` and its id, one wake-up
    /// of the client more per answer).
    pub async fn write_parts(&self, head: &[u8], tail: &[u8]) -> std::io::Result<()> {
        let mut slot = self.inner.lock().await;
        let Some(out) = slot.as_mut() else {
            return Err(closed());
        };
        if tail.is_empty() {
            out.write_all(head).await?;
        } else {
            // tokio writes a chain's parts together (`write_vectored`) where `out` takes them,
            // each part in turn where it does not, and picks up after a partial write.
            out.write_all_buf(&mut head.chain(tail)).await?;
        }
        out.flush().await
    }
}

/// Where the express lane writes lines for a client (object-safe, for calls that hold one).
pub(crate) trait LineOut: Send + Sync {
    /// Write `line` (which ends with a newline) in one piece.
    fn write_line<'a>(
        &'a self,
        line: &'a [u8],
    ) -> Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'a>>;
}

impl<W: AsyncWrite + Unpin + Send + 'static> LineOut for LineSink<W> {
    fn write_line<'a>(
        &'a self,
        line: &'a [u8],
    ) -> Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'a>> {
        Box::pin(LineSink::write_line(self, line))
    }
}

impl<W> LineSink<W> {
    /// Drop the writer, closing the pipe for both ends (rmcp's closing only drops its handle).
    pub async fn close(&self) {
        self.inner.lock().await.take();
    }
}

/// rmcp's end of a shared pipe (see the module docs).
pub struct SharedWriter<W> {
    inner: Arc<Mutex<Slot<W>>>,
    guard: Option<OwnedMutexGuard<Slot<W>>>,
    acquiring: Option<Acquire<W>>,
    /// Bytes of an unfinished message were written: the lock stays held until its newline.
    mid_line: bool,
}

/// Share `writer`: rmcp writes through the first, the express lane through the second.
pub fn share<W: Send + 'static>(writer: W) -> (SharedWriter<W>, LineSink<W>) {
    let inner = Arc::new(Mutex::new(Some(writer)));
    let sink = LineSink {
        inner: inner.clone(),
    };
    (
        SharedWriter {
            inner,
            guard: None,
            acquiring: None,
            mid_line: false,
        },
        sink,
    )
}

impl<W: Send + 'static> SharedWriter<W> {
    fn poll_guard(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<&mut W>> {
        if self.guard.is_none() {
            let inner = self.inner.clone();
            let acquiring = self
                .acquiring
                .get_or_insert_with(|| Box::pin(inner.lock_owned()));
            let guard = ready!(acquiring.as_mut().poll(cx));
            self.acquiring = None;
            self.guard = Some(guard);
        }
        match self.guard.as_deref_mut() {
            Some(Some(writer)) => Poll::Ready(Ok(writer)),
            Some(None) => Poll::Ready(Err(closed())),
            // Set just above.
            None => Poll::Pending,
        }
    }

    fn release_between_lines(&mut self) {
        if !self.mid_line {
            self.guard = None;
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> AsyncWrite for SharedWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let writer = ready!(this.poll_guard(cx))?;
        let written = ready!(Pin::new(writer).poll_write(cx, buf))?;
        if written > 0 {
            this.mid_line = buf[written - 1] != b'\n';
        }
        Poll::Ready(Ok(written))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let writer = ready!(this.poll_guard(cx))?;
        ready!(Pin::new(writer).poll_flush(cx))?;
        this.release_between_lines();
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let Ok(writer) = ready!(this.poll_guard(cx)) else {
            // Shut down before.
            this.guard = None;
            return Poll::Ready(Ok(()));
        };
        ready!(Pin::new(writer).poll_shutdown(cx))?;
        this.mid_line = false;
        if let Some(slot) = this.guard.as_deref_mut() {
            *slot = None;
        }
        this.release_between_lines();
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn shutting_down_closes_the_pipe_though_the_lane_keeps_its_end() -> std::io::Result<()> {
        let (tx, mut rx) = tokio::io::duplex(64);
        let (mut rmcp_side, sink) = share(tx);
        sink.write_line(b"one\n").await?;
        rmcp_side.shutdown().await?;
        rmcp_side.shutdown().await?;
        let mut all = String::new();
        rx.read_to_string(&mut all).await?;
        assert_eq!(all, "one\n", "the reader saw the end");
        let late = sink.write_line(b"two\n").await;
        assert_eq!(
            late.map_err(|e| e.kind()),
            Err(std::io::ErrorKind::BrokenPipe)
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_line_in_parts_arrives_whole_through_a_pipe_it_overfills() -> std::io::Result<()> {
        // A real pipe (it takes vectored writes) holding less than the line: the writes are partial.
        let (tx, mut rx) = tokio::net::unix::pipe::pipe()?;
        let (rmcp_side, sink) = share(tx);
        let big = vec![b'a'; 300_000];
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            rx.read_to_end(&mut all).await.map(|_| all)
        });
        sink.write_parts(&big, b"tail\n").await?;
        sink.write_parts(b"", b"second\n").await?;
        sink.close().await;
        // The pipe closes when both ends let go.
        drop(rmcp_side);
        let all = reader.await.expect("joined")?;
        assert_eq!(all.len(), 300_000 + "tail\nsecond\n".len());
        assert!(all[..300_000].iter().all(|&b| b == b'a'));
        assert_eq!(&all[300_000..], b"tail\nsecond\n");
        Ok(())
    }

    #[tokio::test]
    async fn lines_from_both_ends_never_interleave() -> std::io::Result<()> {
        let (tx, mut rx) = tokio::io::duplex(64);
        let (mut rmcp_side, sink) = share(tx);
        let long = format!("{}\n", "r".repeat(10_000));
        let short = format!("{}\n", "e".repeat(3_000));
        let writer = {
            let long = long.clone();
            tokio::spawn(async move {
                for _ in 0..20 {
                    // In pieces, as a framed writer may: the lock is held until the newline.
                    let (a, b) = long.as_bytes().split_at(4_000);
                    rmcp_side.write_all(a).await?;
                    rmcp_side.flush().await?;
                    rmcp_side.write_all(b).await?;
                    rmcp_side.flush().await?;
                }
                std::io::Result::Ok(rmcp_side)
            })
        };
        let express = {
            let short = short.clone();
            tokio::spawn(async move {
                for _ in 0..20 {
                    sink.write_line(short.as_bytes()).await?;
                }
                std::io::Result::Ok(())
            })
        };
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while out.len() < 20 * (long.len() + short.len()) {
            let n = rx.read(&mut buf).await?;
            out.extend_from_slice(&buf[..n]);
        }
        writer.await.expect("joined")?;
        express.await.expect("joined")?;
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 40);
        for line in lines {
            assert!(
                line == long.trim_end() || line == short.trim_end(),
                "a line was cut: {} bytes",
                line.len()
            );
        }
        Ok(())
    }
}
