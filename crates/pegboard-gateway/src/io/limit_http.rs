//! The message limit for streamable HTTP servers.
//!
//! rmcp's HTTP client already refuses a response body or SSE event over its configured size
//! before holding it, but the request then fails as "response stream closed" (SSE) or as a
//! transport error (JSON), which reads like a dead server. [`LimitedHttpClient`] wraps the HTTP
//! client and turns exactly those refusals into a JSON-RPC error for the request that was posted,
//! with the same message as for stdio servers ([`super::limit::too_big_message`]).

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

use super::limit::too_big_message;

/// What rmcp's bounded SSE reader says when an event is over its cap (its error type is
/// private, so it is recognised by its message).
const SSE_TOO_LARGE: &str = "SSE event exceeded the maximum size";

/// An rmcp HTTP client whose oversized responses become errors naming `server` and `limit`.
/// The caps themselves are rmcp's: set them to `limit` in the transport's config.
#[derive(Clone, Debug)]
pub struct LimitedHttpClient {
    inner: reqwest::Client,
    server: Arc<str>,
    limit: usize,
    /// Shown the data of every SSE event that answers a request (see [`pegboard::ToolListTap`]).
    tap: Option<pegboard::ToolListTap>,
}

impl LimitedHttpClient {
    /// Wrap `inner` for the server `server`, whose messages may be `limit` bytes at most.
    pub fn new(inner: reqwest::Client, server: &str, limit: usize) -> Self {
        Self {
            inner,
            server: server.into(),
            limit,
            tap: None,
        }
    }

    /// Show the data of every SSE event that answers a request to `tap`, which keeps what rmcp's
    /// `Tool` drops from the server's `tools/list` answers. A plain JSON response body is decoded
    /// by rmcp's client before it gets here and is not seen (servers of the official SDKs answer
    /// on SSE unless told otherwise).
    #[must_use]
    pub fn with_tap(mut self, tap: pegboard::ToolListTap) -> Self {
        self.tap = Some(tap);
        self
    }

    fn error_for(&self, id: RequestId) -> ServerJsonRpcMessage {
        super::over_limit::over_limit(&self.server);
        let message = too_big_message(&self.server, self.limit);
        tracing::debug!(server = %self.server, %id, "{message}; the request fails");
        ServerJsonRpcMessage::error(ErrorData::internal_error(message, None), Some(id))
    }

    /// `response` with a refusal for size replaced by an error for request `id`.
    fn limited(
        &self,
        id: Option<RequestId>,
        response: Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let Some(id) = id else { return response };
        match response {
            Err(StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                Ok(StreamableHttpPostResponse::Json(self.error_for(id), None))
            }
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.limited_stream(id, stream), session),
            ),
            other => other,
        }
    }

    /// `stream` with an oversized event replaced by an error event for request `id`, which ends it.
    fn limited_stream(
        &self,
        id: RequestId,
        stream: BoxStream<'static, Result<Sse, SseError>>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let this = self.clone();
        stream
            .scan(false, move |ended, item| {
                if *ended {
                    return futures::future::ready(None);
                }
                let item = match item {
                    Err(SseError::Body(e)) if e.to_string().starts_with(SSE_TOO_LARGE) => {
                        *ended = true;
                        match serde_json::to_string(&this.error_for(id.clone())) {
                            Ok(data) => Ok(Sse {
                                event: Some("message".into()),
                                data: Some(data),
                                id: None,
                                retry: None,
                            }),
                            Err(_) => Err(SseError::Body(e)),
                        }
                    }
                    Ok(event) => {
                        if let (Some(tap), Some(data)) = (&this.tap, &event.data) {
                            tap.observe(data.as_bytes());
                        }
                        Ok(event)
                    }
                    other => other,
                };
                futures::future::ready(Some(item))
            })
            .boxed()
    }
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

impl StreamableHttpClient for LimitedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let id = request_id(&message);
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.limited(id, response)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let id = request_id(&message);
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.limited(id, response)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let id = request_id(&message);
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.limited(id, response)
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_ {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<
        Output = Result<
            BoxStream<'static, Result<Sse, SseError>>,
            StreamableHttpError<Self::Error>,
        >,
    > + Send
    + '_ {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<
        Output = Result<
            BoxStream<'static, Result<Sse, SseError>>,
            StreamableHttpError<Self::Error>,
        >,
    > + Send
    + '_ {
        self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        )
    }
}
