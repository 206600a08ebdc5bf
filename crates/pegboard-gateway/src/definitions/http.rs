//! The HTTP front's `tools/list` answers made whole (see the module docs of [`super`]): rmcp's
//! streamable HTTP service serialises its typed answer itself, so a layer around it puts the
//! definitions back in the JSON body, or in the event of the stream, that carries the answer.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use http_body_util::BodyExt;
use pegboard::PegBoard;
use sse_stream::{Sse, SseStream};

use super::Whole;

/// Marks a request whose body asks `tools/list`: set by the front that reads every `POST`'s body
/// (`crate::express::http`), so that only such answers are looked at here.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AsksToolsList;

/// The layer (see the module docs): the answer to a request marked [`AsksToolsList`], with its
/// tools whole; any other response as it is.
pub(crate) async fn whole_tools(
    State(board): State<PegBoard>,
    request: Request,
    next: Next,
) -> Response {
    let asks = request.extensions().get::<AsksToolsList>().is_some();
    let response = next.run(request).await;
    if !asks {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    if is(&parts.headers, "application/json") {
        // One JSON-RPC message, made by rmcp from the board: bounded by the board's own limits.
        let Ok(bytes) = body.collect().await.map(|b| b.to_bytes()) else {
            return Response::from_parts(parts, Body::empty());
        };
        let Some(whole) = Whole::of(&board).message(&bytes) else {
            return Response::from_parts(parts, Body::from(bytes));
        };
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::from(whole));
    }
    if is(&parts.headers, "text/event-stream") {
        parts.headers.remove(header::CONTENT_LENGTH);
        let events = SseStream::new(body).map(move |event| match event {
            Ok(event) => Ok(Bytes::from(whole_event(&board, event))),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        });
        return Response::from_parts(parts, Body::from_stream(events));
    }
    Response::from_parts(parts, body)
}

/// An event of the stream, its data (a JSON-RPC message) with the tools whole if it is the
/// answer.
fn whole_event(board: &PegBoard, mut event: Sse) -> Sse {
    if let Some(data) = &event.data
        && data.contains("\"tools\"")
        && let Some(whole) = Whole::of(board).message(data.as_bytes())
        && let Ok(whole) = String::from_utf8(whole)
    {
        event.data = Some(whole);
    }
    event
}

/// Whether the response's Content-Type is `mime`.
fn is(headers: &HeaderMap, mime: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(mime))
}
