//! An HTTP call's own stream: what the call sends its client before its answer (progress, the
//! server's requests during the call), then the answer.
//!
//! The response's kind is chosen as late as it can be, as a streamable-HTTP server may: a call
//! that asked for progress answers with an event stream at once (each progress notification an
//! event as the server sends it, then the answer; rmcp's client asks for progress on every
//! request, so this is how its calls take the lane); any other call answers with one JSON body,
//! unless the server asks the client something before answering — then the response becomes an
//! event stream whose first event is that request (the call's own stream, where the client
//! looks for it), and the answer follows as the last event. A call cancelled before anything was
//! sent gets an event stream that ends with no event, as on rmcp's way.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use tokio::sync::mpsc;

use crate::io::writer::LineOut;

/// Events held for a client that reads slower than the call sends; then the sender waits for
/// it (nothing is dropped).
const BACKLOG: usize = 64;

/// What a call sends its client.
#[derive(Debug)]
enum Out {
    /// A message before the answer (progress, a request), one JSON-RPC line.
    Event(Bytes),
    /// The answer, one JSON-RPC line.
    Answer(Bytes),
}

/// A new stream: the end the call writes to, and the end the response is made of.
pub(crate) fn channel() -> (Events, Stream) {
    let (tx, rx) = mpsc::channel(BACKLOG);
    (Events(tx), Stream(rx))
}

/// The end a call writes its JSON-RPC lines to.
#[derive(Clone, Debug)]
pub(crate) struct Events(mpsc::Sender<Out>);

impl Events {
    async fn send(&self, out: Out) -> std::io::Result<()> {
        self.0.send(out).await.map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away")
        })
    }

    /// Send one message before the answer (a trailing newline is dropped).
    pub(crate) async fn send_event(&self, line: &[u8]) -> std::io::Result<()> {
        self.send(Out::Event(Bytes::copy_from_slice(trimmed(line))))
            .await
    }

    /// Send the answer (a trailing newline is dropped); the stream ends once every sender is
    /// gone.
    pub(crate) async fn send_answer(&self, mut line: Vec<u8>) -> std::io::Result<()> {
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        self.send(Out::Answer(Bytes::from(line))).await
    }
}

fn trimmed(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

impl LineOut for Events {
    fn write_line<'a>(
        &'a self,
        line: &'a [u8],
    ) -> Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'a>> {
        Box::pin(self.send_event(line))
    }
}

/// The response end of a call's stream.
#[derive(Debug)]
pub(crate) struct Stream(mpsc::Receiver<Out>);

impl Stream {
    /// The response: an event stream at once when `streaming`, else decided by what comes
    /// first (see the module docs).
    pub(crate) async fn respond(mut self, streaming: bool) -> Response {
        if streaming {
            return event_stream(None, self);
        }
        match self.0.recv().await {
            Some(Out::Answer(line)) => json(Body::from(line)),
            first => event_stream(first, self),
        }
    }
}

/// `body` as a JSON response.
pub(crate) fn json(body: Body) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn event_stream(first: Option<Out>, rest: Stream) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::new(EventBody { first, rest }),
    )
        .into_response()
}

/// The event stream body: each message one `data:` event, ending after the answer (or when
/// every sender is gone).
#[derive(Debug)]
struct EventBody {
    first: Option<Out>,
    rest: Stream,
}

fn event(out: Out) -> (Bytes, bool) {
    let (line, last) = match out {
        Out::Event(line) => (line, false),
        Out::Answer(line) => (line, true),
    };
    let mut event = Vec::with_capacity(line.len() + 8);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(&line);
    event.extend_from_slice(b"\n\n");
    (Bytes::from(event), last)
}

impl http_body::Body for EventBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let next = match this.first.take() {
            Some(out) => Some(out),
            None => match this.rest.0.poll_recv(cx) {
                Poll::Ready(next) => next,
                Poll::Pending => return Poll::Pending,
            },
        };
        Poll::Ready(next.map(|out| {
            let (bytes, last) = event(out);
            if last {
                // Nothing follows the answer.
                this.rest.0.close();
            }
            Ok(Frame::data(bytes))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn body(response: Response) -> (String, String) {
        let kind = response.headers()[header::CONTENT_TYPE]
            .to_str()
            .expect("ascii")
            .to_string();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("infallible")
            .to_bytes();
        (kind, String::from_utf8(bytes.to_vec()).expect("utf-8"))
    }

    #[tokio::test]
    async fn an_answer_alone_is_json_and_anything_before_it_makes_a_stream() {
        let (events, stream) = channel();
        events
            .send_answer(b"{\"id\":1}\n".to_vec())
            .await
            .expect("sent");
        drop(events);
        let (kind, text) = body(stream.respond(false).await).await;
        assert_eq!(
            (kind.as_str(), text.as_str()),
            ("application/json", "{\"id\":1}")
        );

        let (events, stream) = channel();
        events
            .send_event(b"{\"method\":\"sampling/createMessage\"}\n")
            .await
            .expect("sent");
        events
            .send_answer(b"{\"id\":1}".to_vec())
            .await
            .expect("sent");
        let (kind, text) = body(stream.respond(false).await).await;
        assert_eq!(kind, "text/event-stream");
        assert_eq!(
            text,
            "data: {\"method\":\"sampling/createMessage\"}\n\ndata: {\"id\":1}\n\n"
        );
    }

    #[tokio::test]
    async fn a_streaming_call_streams_and_a_cancelled_one_ends_with_no_event() {
        let (events, stream) = channel();
        let progress = events.clone();
        let response = stream.respond(true).await;
        progress
            .send_event(b"{\"method\":\"notifications/progress\"}")
            .await
            .expect("sent");
        drop(progress);
        events
            .send_answer(b"{\"id\":1}".to_vec())
            .await
            .expect("sent");
        let (kind, text) = body(response).await;
        assert_eq!(kind, "text/event-stream");
        assert_eq!(
            text,
            "data: {\"method\":\"notifications/progress\"}\n\ndata: {\"id\":1}\n\n"
        );

        let (events, stream) = channel();
        drop(events);
        let (kind, text) = body(stream.respond(false).await).await;
        assert_eq!((kind.as_str(), text.as_str()), ("text/event-stream", ""));
    }
}
