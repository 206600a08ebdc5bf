//! The client's end of the express lane: takes the `tools/call` requests it can carry out of the
//! client's input before rmcp parses them, and answers them itself.

use std::sync::{Arc, OnceLock, Weak};

use pegboard::PegBoard;
use rmcp::{Peer, RoleServer};
use tokio::io::AsyncWrite;

use super::call::prepare;
use super::cancels::Cancels;
use super::request::{Call, Incoming, classify};
use super::tools_list::ToolsList;
use super::writer::{LineOut, LineSink};
use crate::startup::Startup;
use crate::upstream::limit::Divert;

/// The express lane's client end (see the module docs).
pub struct Front<W> {
    me: Weak<Self>,
    board: PegBoard,
    out: LineSink<W>,
    /// The same, for calls that pass progress on.
    progress_out: Arc<dyn LineOut>,
    /// The session's peer, once its handshake is done and it speaks a legacy generation.
    peer: OnceLock<Peer<RoleServer>>,
    /// Calls on the lane by the client's raw id: how to cancel each.
    calls: Arc<Cancels<Box<[u8]>>>,
    startup: Startup,
    tools: ToolsList,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Front<W> {
    pub(crate) fn new(board: PegBoard, out: LineSink<W>, startup: Startup) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            board,
            progress_out: Arc::new(out.clone()),
            out,
            peer: OnceLock::new(),
            calls: Arc::default(),
            startup,
            tools: ToolsList::default(),
        })
    }

    /// The session is up: from now on calls may take the lane (when the client speaks a legacy
    /// generation; a 2026-07-28 session stays on rmcp's way, which adds what it needs).
    pub(crate) fn start(&self, peer: Peer<RoleServer>) {
        if super::call::legacy_client(&peer) {
            let _ = self.peer.set(peer);
        }
    }

    /// Take `call` when it can go on the lane (see [`super::call::prepare`]).
    fn take(&self, peer: &Peer<RoleServer>, call: &Call<'_>) -> bool {
        let Some(me) = self.me.upgrade() else {
            return false;
        };
        let out = Some(Arc::clone(&self.progress_out));
        let Some(job) = prepare(&self.board, peer, call, out) else {
            return false;
        };
        let entry = self.calls.register(call.id().into());
        // Boxed: the call's future is large (its timer, flight and answer), and a task moves
        // what it is given several times on its way to the scheduler; a box moves once.
        tokio::spawn(Box::pin(async move {
            // No answer for a cancelled request; dropping the job tells the server.
            let answer = entry.run(job, std::future::pending()).await;
            if let Some(line) = answer
                && let Err(e) = me.out.write_line(&line).await
            {
                tracing::debug!("could not answer the client: {e}");
            }
        }));
        true
    }

    /// Answer `tools/list` from the cached serialisation, once every server has started (before,
    /// rmcp's way waits for them).
    fn list_tools(&self, id: &[u8]) -> bool {
        if !self.startup.is_settled() {
            return false;
        }
        let (head, tail) = self.tools.answer_parts(&self.board, id);
        let out = self.out.clone();
        tokio::spawn(async move {
            if let Err(e) = out.write_parts(&head, &tail).await {
                tracing::debug!("could not answer the client: {e}");
            }
        });
        true
    }

    fn cancel(&self, ds_id: &[u8]) -> bool {
        self.calls.cancel(ds_id)
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Divert for Front<W> {
    fn divert(&self, line: &[u8]) -> bool {
        let Some(peer) = self.peer.get() else {
            return false;
        };
        match classify(line) {
            Incoming::Call(call) => self.take(peer, &call),
            Incoming::ListTools(id) => self.list_tools(id),
            Incoming::Cancelled(id) => self.cancel(id),
            Incoming::Other => false,
        }
    }
}
