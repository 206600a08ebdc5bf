//! The HTTP client of a `url` server that logs in with OAuth: rmcp's streamable HTTP client with
//! the connection's bearer token on every request, a 401 answered by one refresh and one retry.
//!
//! The token goes to the server's own URL only: rmcp's transport sends every request of a
//! connection to the one URL of its config, and this client is made for that connection alone.
//! Whatever `Authorization` the transport passes (none: the config's static header is not used
//! together with OAuth) is replaced by the connection's token.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use futures::stream::BoxStream;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

use super::keeper::Upstream;

/// `C` with the bearer token of `auth` on every request.
#[derive(Clone, Debug)]
pub struct OAuthHttpClient<C> {
    inner: C,
    auth: Upstream,
}

impl<C> OAuthHttpClient<C> {
    /// Wrap `inner` for the connection whose OAuth state is `auth`.
    pub fn new(inner: C, auth: Upstream) -> Self {
        Self { inner, auth }
    }
}

impl<C: StreamableHttpClient + Sync> OAuthHttpClient<C> {
    /// Send `payload` with `call` and the token; on a 401, refresh once and send it again. The
    /// payload is cloned only when a retry may come (a token was sent): a server without OAuth
    /// costs no copy of its messages.
    async fn authorized<P, T, F, Fut>(
        &self,
        payload: P,
        call: F,
    ) -> Result<T, StreamableHttpError<C::Error>>
    where
        P: Clone,
        F: Fn(Option<String>, P) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let token = self.auth.bearer().await.map_err(|e| {
            StreamableHttpError::AuthRequired(AuthRequiredError::new(e.to_string()))
        })?;
        let spare = token.as_ref().map(|_| payload.clone());
        match call(token.clone(), payload).await {
            Err(StreamableHttpError::AuthRequired(challenge)) => match (token, spare) {
                (Some(sent), Some(payload)) => match self.auth.after_unauthorized(&sent).await {
                    Some(fresh) if fresh != sent => call(Some(fresh), payload).await,
                    _ => Err(StreamableHttpError::AuthRequired(challenge)),
                },
                _ => {
                    self.auth.unauthorized_without_token();
                    Err(StreamableHttpError::AuthRequired(challenge))
                }
            },
            other => other,
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for OAuthHttpClient<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized((message, custom_headers), |token, (message, headers)| {
            self.inner
                .post_message(uri.clone(), message, session_id.clone(), token, headers)
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized((message, custom_headers), |token, (message, headers)| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message,
                session_id.clone(),
                token,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized((message, custom_headers), |token, (message, headers)| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message,
                session_id.clone(),
                token,
                headers,
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.authorized(custom_headers, |token, headers| {
            self.inner
                .delete_session(uri.clone(), session_id.clone(), token, headers)
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.authorized((last_event_id, custom_headers), |token, (last, headers)| {
            self.inner
                .get_stream(uri.clone(), session_id.clone(), last, token, headers)
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.authorized((last_event_id, custom_headers), |token, (last, headers)| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last,
                token,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}
