//! An HTTP call's answer as a server-sent event stream, for a call that asked for progress: each
//! progress notification is an event as the server sends it, then the answer, then the end (what
//! rmcp's way answers such a call with). rmcp's client asks for progress on every request, so
//! this is how its calls take the lane.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use tokio::sync::mpsc;

use super::writer::LineOut;

/// Events held for a client that reads slower than the server sends progress; then the
/// progress forwarding waits for it (the answer is never dropped).
const BACKLOG: usize = 64;

/// A new stream: the end the call writes to, and the response body.
pub(crate) fn channel() -> (Events, EventStream) {
    let (tx, rx) = mpsc::channel(BACKLOG);
    (Events(tx), EventStream(rx))
}

/// The response for `stream`.
pub(crate) fn response(stream: EventStream) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        axum::body::Body::new(stream),
    )
        .into_response()
}

/// The end a call writes its JSON-RPC lines to, one `data:` event each.
#[derive(Clone, Debug)]
pub(crate) struct Events(mpsc::Sender<Bytes>);

impl Events {
    /// Send one line (a trailing newline is dropped) as an event.
    pub(crate) async fn send_line(&self, line: &[u8]) -> std::io::Result<()> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let mut event = Vec::with_capacity(line.len() + 8);
        event.extend_from_slice(b"data: ");
        event.extend_from_slice(line);
        event.extend_from_slice(b"\n\n");
        self.0.send(Bytes::from(event)).await.map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away")
        })
    }

    /// Done when the client has gone away (the response body was dropped).
    pub(crate) async fn closed(&self) {
        self.0.closed().await;
    }
}

impl LineOut for Events {
    fn write_line<'a>(
        &'a self,
        line: &'a [u8],
    ) -> Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'a>> {
        Box::pin(self.send_line(line))
    }
}

/// The response body: the events as they are sent, ending when every [`Events`] is dropped.
#[derive(Debug)]
pub(crate) struct EventStream(mpsc::Receiver<Bytes>);

impl http_body::Body for EventStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.get_mut()
            .0
            .poll_recv(cx)
            .map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn lines_become_events_and_the_stream_ends_with_the_last_sender() {
        let (events, stream) = channel();
        let progress = events.clone();
        progress
            .send_line(b"{\"method\":\"notifications/progress\"}\n")
            .await
            .expect("sent");
        drop(progress);
        events.send_line(b"{\"id\":1}").await.expect("sent");
        drop(events);
        let body = stream.collect().await.expect("infallible").to_bytes();
        assert_eq!(
            &body[..],
            b"data: {\"method\":\"notifications/progress\"}\n\ndata: {\"id\":1}\n\n"
        );
    }

    #[tokio::test]
    async fn a_client_gone_is_seen_and_refuses_more() {
        let (events, stream) = channel();
        drop(stream);
        events.closed().await;
        assert!(events.send_line(b"{}").await.is_err());
    }
}
