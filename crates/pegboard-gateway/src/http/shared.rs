//! rmcp's `StreamableHttpService` behind one `Arc`.
//!
//! Tower clones a service for every request it passes on (axum's `from_fn` middleware does, and
//! rmcp's own `call` clones itself before handling). rmcp's service clones its whole config:
//! the allowed Host strings and a `CancellationToken`, whose clone and drop take a lock. Held
//! here behind one `Arc`, a clone is one reference count, and requests are handled through
//! rmcp's public `handle(&self)` without a copy.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::{Request, Response};
use futures::future::BoxFuture;
use rmcp::transport::streamable_http_server::{SessionManager, StreamableHttpService};

/// See the module docs.
pub(crate) struct Shared<S, M>(Arc<StreamableHttpService<S, M>>);

impl<S, M> Shared<S, M> {
    pub(crate) fn new(service: StreamableHttpService<S, M>) -> Self {
        Self(Arc::new(service))
    }
}

impl<S, M> Clone for Shared<S, M> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S, M> tower::Service<Request<Body>> for Shared<S, M>
where
    S: rmcp::ServerHandler + Send + 'static,
    M: SessionManager,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // rmcp's service is always ready (its `poll_ready` says so too).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let service = Arc::clone(&self.0);
        Box::pin(async move { Ok(service.handle(request).await.map(Body::new)) })
    }
}
