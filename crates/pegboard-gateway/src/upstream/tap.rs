//! A transport wrapper that forwards upstream progress notifications in wire order.
//!
//! rmcp hands each notification to the client handler on a task of its own, while a response
//! completes its request inline: the last progress notification of a call could then reach the
//! downstream after the call's result (and be dropped there). Forwarding from `receive`, before
//! rmcp sees the message, keeps the upstream's order: every progress of a call is written
//! downstream before its result can be.

use std::{borrow::Cow, sync::Arc};

use rmcp::{
    RoleClient,
    model::{JsonRpcMessage, ServerNotification},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::hub::Hub;

/// `T` with progress forwarded through `hub` as it arrives.
pub struct ProgressTap<T> {
    inner: T,
    hub: Arc<Hub>,
}

impl<T> ProgressTap<T> {
    /// Wrap `inner`.
    pub fn new(inner: T, hub: Arc<Hub>) -> Self {
        Self { inner, hub }
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
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
            && let Some(flight) = self.hub.flights().by_token(&p.params.progress_token)
        {
            flight.forward_progress(p.params.clone()).await;
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
