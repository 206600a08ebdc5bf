//! The OTLP/HTTP sink the `traces` gateways export to when no `--otlp-endpoint` is given: a
//! loopback listener in the harness's process that takes every POST (`/v1/traces`), counts its
//! requests and bytes, and answers 200 with an empty `ExportTraceServiceResponse` (zero bytes
//! of protobuf). The gateway does all of an export's work (batching, encoding, the HTTP
//! request); only decoding is skipped, and that would be the collector's CPU, not the gateway's.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// What the sink received.
#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// A running sink; it stops with the harness's runtime.
pub struct OtlpSink {
    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` gets (`http://127.0.0.1:PORT`).
    pub endpoint: String,
    counts: Arc<Counts>,
}

impl OtlpSink {
    /// Listen on a free loopback port and serve every connection until the runtime ends.
    pub async fn start() -> Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let endpoint = format!("http://{}", listener.local_addr()?);
        let counts = Arc::new(Counts::default());
        let served = Arc::clone(&counts);
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let counts = Arc::clone(&served);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let counts = Arc::clone(&counts);
                        async move { Ok::<_, Infallible>(take(&counts, request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), service)
                        .await;
                });
            }
        });
        Ok(Self { endpoint, counts })
    }

    /// Export requests and their bytes received so far.
    pub fn received(&self) -> (u64, u64) {
        (
            self.counts.requests.load(Ordering::Relaxed),
            self.counts.bytes.load(Ordering::Relaxed),
        )
    }
}

/// Count one export request and accept it.
async fn take(counts: &Counts, request: Request<Body>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    match request.into_body().collect().await {
        Ok(body) => {
            let len = body.to_bytes().len() as u64;
            counts.requests.fetch_add(1, Ordering::Relaxed);
            counts.bytes.fetch_add(len, Ordering::Relaxed);
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-protobuf"),
            );
        }
        Err(_) => *response.status_mut() = StatusCode::BAD_REQUEST,
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn posts_are_counted_and_accepted() {
        let sink = OtlpSink::start().await.expect("listening");
        let addr = sink.endpoint.trim_start_matches("http://").to_owned();
        let tcp = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connects");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .expect("handshake");
        tokio::spawn(conn);
        for body in [&b"abc"[..], &b"defgh"[..]] {
            let request = Request::post("/v1/traces")
                .header(CONTENT_TYPE, "application/x-protobuf")
                .body(Full::new(Bytes::from_static(body)))
                .expect("request");
            let response = sender.send_request(request).await.expect("answered");
            assert_eq!(response.status(), StatusCode::OK);
        }
        assert_eq!(sink.received(), (2, 8));
    }
}
