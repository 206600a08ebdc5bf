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
//!
//! The stream's channel is made only when something is sent on it or the response is an event
//! stream: most calls answer with JSON and never need one (making it was a tenth of what the
//! lane added to an HTTP call). What else the call's writers need (`S`: the client end of the
//! call, `super::asks`) lives in the same allocation, which they share as `Arc<Channel<S>>`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::task::AtomicWaker;
use http_body::Frame;
use tokio::sync::mpsc;

use super::detach::{Answer, Detachable};
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

/// The end a call writes its JSON-RPC lines to (shared by the call's parts that write), with
/// `S` beside it.
#[derive(Debug)]
pub(crate) struct Events<S>(Arc<Channel<S>>);

impl<S> Clone for Events<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

/// The stream's channel, made at its first use (see the module docs), and `side`.
#[derive(Debug)]
pub(crate) struct Channel<S> {
    tx: OnceLock<mpsc::Sender<Out>>,
    /// The other end, until the response takes it.
    rx: Mutex<Option<mpsc::Receiver<Out>>>,
    /// Woken when the first message is sent (an atomic waker, not a `Notify`: the response
    /// waits on it for every call, and most calls never send one).
    opened: AtomicWaker,
    side: S,
}

impl<S> Channel<S> {
    /// What lives beside the channel.
    pub(crate) fn side(&self) -> &S {
        &self.side
    }

    fn sender(&self) -> &mpsc::Sender<Out> {
        self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::channel(BACKLOG);
            *self.receiver_slot() = Some(rx);
            tx
        })
    }

    fn receiver_slot(&self) -> std::sync::MutexGuard<'_, Option<mpsc::Receiver<Out>>> {
        self.rx.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether anything was sent (or the response became an event stream).
    fn is_open(&self) -> bool {
        self.tx.get().is_some()
    }

    async fn send(&self, out: Out) -> std::io::Result<()> {
        let tx = self.sender();
        self.opened.wake();
        tx.send(out).await.map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away")
        })
    }

    /// Send one message before the answer (a trailing newline is dropped).
    pub(crate) async fn send_event(&self, line: &[u8]) -> std::io::Result<()> {
        self.send(Out::Event(Bytes::copy_from_slice(trimmed(line))))
            .await
    }

    /// Send the answer (a trailing newline is dropped); the stream ends after it.
    async fn send_answer(&self, mut line: Vec<u8>) -> std::io::Result<()> {
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        self.send(Out::Answer(Bytes::from(line))).await
    }
}

impl<S> std::ops::Deref for Events<S> {
    type Target = Channel<S>;

    fn deref(&self) -> &Channel<S> {
        &self.0
    }
}

impl<S: Send + Sync + 'static> Events<S> {
    /// A call's events, with `side` beside them.
    pub(crate) fn with(side: S) -> Self {
        Self(Arc::new(Channel {
            tx: OnceLock::new(),
            rx: Mutex::new(None),
            opened: AtomicWaker::new(),
            side,
        }))
    }

    /// The shared channel, for the call's parts that write to it (as a `dyn` of theirs).
    pub(crate) fn shared(&self) -> Arc<Channel<S>> {
        Arc::clone(&self.0)
    }

    /// The response to the call `call`, whose parts write to these events: an event stream at
    /// once when `streaming`, else decided by what comes first (see the module docs). The call
    /// is driven here while the response waits for it, on its own once the response is an
    /// event stream (its answer the stream's last event).
    pub(crate) async fn respond(self, streaming: bool, mut call: Detachable) -> Response {
        if streaming {
            return self.event_stream(call);
        }
        // Ready once the channel is made (`sender` makes it before it wakes the waker).
        let opened = std::future::poll_fn(|cx| {
            self.opened.register(cx.waker());
            if self.is_open() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        });
        tokio::select! {
            biased;
            () = opened => self.event_stream(call),
            answer = &mut call => match (answer, self.is_open()) {
                (Some(mut line), false) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    }
                    json(Body::from(line))
                }
                // Something went out before the answer, or nothing comes (cancelled): a stream.
                (answer, _) => {
                    let events = self.clone();
                    let stream = self.event_stream(Detachable::new(async { None }));
                    if answer.is_some() {
                        // Spawned: the stream may hold its backlog until the response is read.
                        tokio::spawn(async move { events.answer(answer).await });
                    }
                    stream
                }
            },
        }
    }

    /// An event stream of these events; `call` goes on as a task of its own, its answer last.
    fn event_stream(self, call: Detachable) -> Response {
        self.sender();
        let rest = self.receiver_slot().take();
        let events = self.clone();
        call.detach(move |answer| async move { events.answer(answer).await });
        (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            Body::new(EventBody { rest }),
        )
            .into_response()
    }

    /// The call's `answer` (if any) as the stream's last event.
    async fn answer(&self, answer: Answer) {
        if let Some(line) = answer
            && let Err(e) = self.send_answer(line).await
        {
            tracing::debug!("could not pass an answer to the client: {e}");
        }
    }
}

fn trimmed(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

impl<S: Send + Sync> LineOut for Channel<S> {
    fn write_line<'a>(
        &'a self,
        line: &'a [u8],
    ) -> Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'a>> {
        Box::pin(self.send_event(line))
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

/// The event stream body: each message one `data:` event, ending after the answer (or when
/// every sender is gone). `None`: taken before (never by this crate): no event.
#[derive(Debug)]
struct EventBody {
    rest: Option<mpsc::Receiver<Out>>,
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
        let Some(rest) = self.get_mut().rest.as_mut() else {
            return Poll::Ready(None);
        };
        let next = match rest.poll_recv(cx) {
            Poll::Ready(next) => next,
            Poll::Pending => return Poll::Pending,
        };
        Poll::Ready(next.map(|out| {
            let (bytes, last) = event(out);
            if last {
                // Nothing follows the answer.
                rest.close();
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

    /// Assert `response` is an event stream of exactly `events`, in order.
    async fn assert_events(response: Response, events: &[&str]) {
        let (kind, text) = body(response).await;
        assert_eq!(kind, "text/event-stream");
        let want: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        assert_eq!(text, want);
    }

    fn answering(line: &'static [u8]) -> Detachable {
        Detachable::new(async move { Some(line.to_vec()) })
    }

    #[tokio::test]
    async fn an_answer_alone_is_json_with_no_channel_made() {
        let events = Events::with(());
        let response = events
            .clone()
            .respond(false, answering(b"{\"id\":1}\n"))
            .await;
        assert!(!events.is_open());
        let (kind, text) = body(response).await;
        assert_eq!(
            (kind.as_str(), text.as_str()),
            ("application/json", "{\"id\":1}")
        );
    }

    #[tokio::test]
    async fn anything_before_the_answer_makes_a_stream_whenever_it_comes() {
        // Sent in the same poll as the answer.
        let events = Events::with(());
        let sender = events.clone();
        let call = Detachable::new(async move {
            sender
                .send_event(b"{\"method\":\"sampling/createMessage\"}\n")
                .await
                .expect("sent");
            Some(b"{\"id\":1}".to_vec())
        });
        assert_events(
            events.respond(false, call).await,
            &[r#"{"method":"sampling/createMessage"}"#, r#"{"id":1}"#],
        )
        .await;

        // Sent while the call waits: the response goes out before the answer comes.
        let events = Events::with(());
        let sender = events.clone();
        let (go_tx, go_rx) = tokio::sync::oneshot::channel::<()>();
        let call = Detachable::new(async move {
            sender
                .send_event(b"{\"method\":\"roots/list\"}")
                .await
                .expect("sent");
            let _ = go_rx.await;
            Some(b"{\"id\":2}".to_vec())
        });
        let response = events.respond(false, call).await;
        go_tx.send(()).expect("the call waits");
        assert_events(response, &[r#"{"method":"roots/list"}"#, r#"{"id":2}"#]).await;
    }

    #[tokio::test]
    async fn a_streaming_call_streams_and_a_cancelled_one_ends_with_no_event() {
        let events = Events::with(());
        let progress = events.clone();
        let (go_tx, go_rx) = tokio::sync::oneshot::channel::<()>();
        let call = Detachable::new(async move {
            let _ = go_rx.await;
            Some(b"{\"id\":1}".to_vec())
        });
        let response = events.respond(true, call).await;
        progress
            .send_event(b"{\"method\":\"notifications/progress\"}")
            .await
            .expect("sent");
        drop(progress);
        go_tx.send(()).expect("the call waits");
        assert_events(
            response,
            &[r#"{"method":"notifications/progress"}"#, r#"{"id":1}"#],
        )
        .await;

        let cancelled = Detachable::new(async { None });
        let (kind, text) = body(Events::with(()).respond(false, cancelled).await).await;
        assert_eq!((kind.as_str(), text.as_str()), ("text/event-stream", ""));
    }
}
