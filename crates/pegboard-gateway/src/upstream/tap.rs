//! A transport wrapper that forwards upstream progress notifications in wire order.
//!
//! rmcp hands each notification to the client handler on a task of its own, while a response
//! completes its request inline: the last progress notification of a call could then reach the
//! downstream after the call's result (and be dropped there). Forwarding from `receive`, before
//! rmcp sees the message, keeps the upstream's order: every progress of a call is written
//! downstream before its result can be.
//!
//! rmcp's service loop drops `receive`'s future whenever another of its events comes first (its
//! `select!`), also while a forward is under way. The forward is therefore held here, with its
//! message, and finished by the next `receive` before anything else is read: a forward dropped
//! half-way and the next one would otherwise be written downstream side by side, in either
//! order (seen: a call's progress `2, 1, 3, …` where the server sent `1, 2, 3, …`).

use std::{borrow::Cow, future::Future, pin::Pin, sync::Arc};

use rmcp::{
    RoleClient,
    model::{JsonRpcMessage, ServerNotification},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::hub::Hub;

/// A progress notification being forwarded, and the message that carried it (handed to rmcp
/// once the forward is done).
struct Forwarding {
    forward: Pin<Box<dyn Future<Output = ()> + Send>>,
    message: RxJsonRpcMessage<RoleClient>,
}

/// `T` with progress forwarded through `hub` as it arrives.
pub struct ProgressTap<T> {
    inner: T,
    hub: Arc<Hub>,
    /// A forward a dropped `receive` left unfinished.
    forwarding: Option<Forwarding>,
}

impl<T> ProgressTap<T> {
    /// Wrap `inner`.
    pub fn new(inner: T, hub: Arc<Hub>) -> Self {
        Self {
            inner,
            hub,
            forwarding: None,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.forwarding.is_none() {
            let message = self.inner.receive().await?;
            let progress = if let JsonRpcMessage::Notification(n) = &message
                && let ServerNotification::ProgressNotification(p) = &n.notification
                && let Some(flight) = self.hub.flights().by_token(&p.params.progress_token)
            {
                Some((flight, p.params.clone()))
            } else {
                None
            };
            let Some((flight, params)) = progress else {
                return Some(message);
            };
            self.forwarding = Some(Forwarding {
                forward: Box::pin(async move { flight.forward_progress(params).await }),
                message,
            });
        }
        // Held in `self` while it runs: if this future is dropped, the next call finishes it.
        let forwarding = self.forwarding.as_mut()?;
        (&mut forwarding.forward).await;
        self.forwarding.take().map(|f| f.message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
