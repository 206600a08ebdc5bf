//! [`WholeTools`]: a server transport whose `tools/list` answers go out whole (see the module
//! docs of [`super`]).

use std::future::Future;

use pegboard::PegBoard;
use rmcp::{
    RoleServer,
    model::{CustomResult, JsonRpcMessage, ServerJsonRpcMessage, ServerResult},
    service::RxJsonRpcMessage,
    transport::Transport,
};

use super::Whole;

/// A downstream transport that sends rmcp's typed `tools/list` answers with every tool's
/// definition whole (as [`super::listing`] lists it); every other message passes as it is.
pub(crate) struct WholeTools<T> {
    inner: T,
    board: PegBoard,
}

impl<T> WholeTools<T> {
    /// `inner`, answering with the definitions of the tools on `board`.
    pub(crate) fn new(inner: T, board: PegBoard) -> Self {
        Self { inner, board }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for WholeTools<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(made_whole(&self.board, item))
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// `message` with its tools whole when it is a `tools/list` answer (one match for any other).
pub(super) fn made_whole(board: &PegBoard, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    let JsonRpcMessage::Response(mut response) = message else {
        return message;
    };
    if let ServerResult::ListToolsResult(list) = &response.result
        && let Some(whole) = Whole::of(board).result(list)
    {
        // Serialised as it is: the same result, with members rmcp's type has no room for.
        response.result = ServerResult::CustomResult(CustomResult(whole));
    }
    JsonRpcMessage::Response(response)
}
