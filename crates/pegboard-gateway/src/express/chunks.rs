//! A response body sent as it is kept: byte chunks written one after the other, never joined.
//!
//! The express lane's `tools/list` answer is a large kept serialisation (0.3 MB for 1,000 tools)
//! followed by the request's id: joining them would copy the whole list for every request. Its
//! length is known, so hyper sends `Content-Length` (not chunked encoding) and hands the chunks
//! to the socket as they are.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};

/// The body (see the module docs).
#[derive(Debug)]
pub(crate) struct Chunks {
    chunks: std::vec::IntoIter<Bytes>,
    remaining: u64,
}

impl Chunks {
    pub(crate) fn new(chunks: Vec<Bytes>) -> Self {
        let remaining = chunks.iter().map(|c| c.len() as u64).sum();
        Self {
            chunks: chunks.into_iter(),
            remaining,
        }
    }
}

impl Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        // Empty chunks are skipped: an empty data frame says nothing.
        let next = this.chunks.find(|c| !c.is_empty());
        if let Some(chunk) = &next {
            this.remaining -= chunk.len() as u64;
        }
        Poll::Ready(next.map(|chunk| Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[tokio::test]
    async fn the_chunks_arrive_in_order_with_their_length_known() {
        let body = Chunks::new(vec![
            Bytes::from_static(b"{\"a\":"),
            Bytes::new(),
            Bytes::from_static(b"1}"),
        ]);
        assert_eq!(body.size_hint().exact(), Some(7));
        assert!(!body.is_end_stream());
        let mut frames = 0;
        let mut all = Vec::new();
        let mut body = body;
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame.expect("infallible").into_data() else {
                panic!("only data frames");
            };
            frames += 1;
            all.extend_from_slice(&data);
        }
        assert_eq!(all, b"{\"a\":1}");
        assert_eq!(frames, 2, "the empty chunk is skipped");
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
    }
}
