//! The express lane's end at a stdio client: takes the `tools/call` requests it can carry out of the
//! client's input before rmcp parses them, and answers them itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use pegboard::PegBoard;
use rmcp::model::RequestId;
use rmcp::{Peer, RoleServer};
use tokio::io::AsyncWrite;
use tokio_util::sync::CancellationToken;

use super::call::prepare;
use super::cancels::Cancels;
use super::request::{Call, Incoming, classify};
use super::tools_list::ToolsList;
use crate::call::{hooks::Hooks, watch::Who};
use crate::identity::Client;
use crate::io::limit::Divert;
use crate::io::writer::{LineOut, LineSink};
use crate::protocol::versions::legacy_client;
use crate::session::{lists::Lists, startup::Startup};
use crate::telemetry::Transport;
use crate::upstream::sides::PeerSide;

/// The express lane's client end (see the module docs).
pub(crate) struct StdioLane<W> {
    me: Weak<Self>,
    board: PegBoard,
    out: LineSink<W>,
    /// The same, for calls that pass progress on.
    progress_out: Arc<dyn LineOut>,
    /// The session's peer, once its handshake is done and it speaks a legacy generation.
    peer: OnceLock<Peer<RoleServer>>,
    /// Whether the lane is on for this session (it is off in search mode).
    on: bool,
    /// The client's `initialize` asked for a legacy generation: `tools/list` may take the lane
    /// before the handshake is over (a client sends it right after `notifications/initialized`,
    /// in the same read as often as not, before rmcp has handed the lane its peer).
    legacy_handshake: AtomicBool,
    /// Whether the handshake ended on a legacy generation, once it has.
    legacy: OnceLock<bool>,
    /// Calls on the lane by the client's raw id: how to cancel each.
    calls: Arc<Cancels<Box<[u8]>>>,
    startup: Startup,
    tools: ToolsList,
    /// Cancelled when the session ends: its calls end at once, upstream too.
    ended: CancellationToken,
    /// The session's client (`--client`, else everything) and what the gateway records.
    client: Arc<Client>,
    hooks: Hooks,
    /// What the session was last answered of its lists.
    lists: Arc<dyn Lists>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> StdioLane<W> {
    pub(crate) fn new(
        board: PegBoard,
        out: LineSink<W>,
        startup: Startup,
        ended: CancellationToken,
        (client, hooks, lists): (Arc<Client>, Hooks, Arc<dyn Lists>),
        on: bool,
    ) -> Arc<Self> {
        let calls: Arc<Cancels<Box<[u8]>>> = Arc::default();
        calls.end_with(ended.clone(), |_| true);
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            board,
            progress_out: Arc::new(out.clone()),
            out,
            peer: OnceLock::new(),
            on,
            legacy_handshake: AtomicBool::new(false),
            legacy: OnceLock::new(),
            calls,
            startup,
            tools: ToolsList::default(),
            ended,
            client,
            hooks,
            lists,
        })
    }

    /// The session is up: from now on calls may take the lane (when the client speaks a legacy
    /// generation; a 2026-07-28 session stays on rmcp's way, which adds what it needs).
    pub(crate) fn start(&self, peer: Peer<RoleServer>) {
        let legacy = legacy_client(&peer);
        let _ = self.legacy.set(legacy);
        let on = legacy && self.on;
        if on {
            let _ = self.peer.set(peer);
        }
        // Until now every call went rmcp's way: rmcp serves the session as soon as it has
        // answered `initialize`, and this runs after (whenever the task that awaited it runs).
        tracing::debug!(
            "express: the session is up (the lane is {})",
            if on { "on" } else { "off" }
        );
    }

    /// Whether a `tools/list` may take the lane now (see [`StdioLane::legacy_handshake`]).
    fn may_list(&self) -> bool {
        self.on
            && self
                .legacy
                .get()
                .copied()
                .unwrap_or_else(|| self.legacy_handshake.load(Ordering::Acquire))
    }

    /// Take `call` when it can go on the lane (see [`super::call::prepare`]).
    fn take(&self, peer: &Peer<RoleServer>, call: &Call<'_>) -> bool {
        let Some(me) = self.me.upgrade() else {
            return false;
        };
        let Some(ds_id) = request_id(call.id()) else {
            return false;
        };
        let out = Some(Arc::clone(&self.progress_out));
        let side = Arc::new(PeerSide::new(peer.clone(), ds_id, true));
        let who = Who {
            client: &self.client,
            hooks: &self.hooks,
            session_id: None,
            transport: Transport::Pipe,
            via: None,
            admitted: None,
        };
        let Some(job) = prepare(&self.board, call, who, side, out, None) else {
            return false;
        };
        // The session's end cancels it too (`Cancels::end_with`).
        let entry = self
            .calls
            .register(call.id().into())
            .cancel_if_ended(&self.ended);
        // Boxed: the call's future is large (its timer, flight and answer), and a task moves
        // what it is given several times on its way to the scheduler; a box moves once.
        tokio::spawn(Box::pin(async move {
            // No answer for a cancelled request, as on rmcp's way.
            let answer = entry.run(job).await;
            if let Some(line) = answer
                && let Err(e) = me.out.write_line(&line).await
            {
                tracing::debug!("could not answer the client: {e}");
            }
        }));
        true
    }

    /// Answer `tools/list` from the cached serialisation, once every server has started (as
    /// rmcp's way does, up to `--wait`): the lane lists every member the servers sent, which
    /// rmcp's typed list cannot, so it also takes the first listing, which usually comes while
    /// the servers start.
    fn list_tools(&self, id: &[u8]) -> bool {
        if self.startup.is_settled() {
            self.lists.tools_answered(&self.client);
            let (head, tail) = self.tools.answer_parts(&self.board, &self.client, id);
            let out = self.out.clone();
            tokio::spawn(async move {
                if let Err(e) = out.write_parts(&head, &tail).await {
                    tracing::debug!("could not answer the client: {e}");
                }
            });
            return true;
        }
        let Some(me) = self.me.upgrade() else {
            return false;
        };
        let id = id.to_vec();
        tokio::spawn(async move {
            me.startup.wait().await;
            me.lists.tools_answered(&me.client);
            let (head, tail) = me.tools.answer_parts(&me.board, &me.client, &id);
            if let Err(e) = me.out.write_parts(&head, &tail).await {
                tracing::debug!("could not answer the client: {e}");
            }
        });
        true
    }

    fn cancel(&self, ds_id: &[u8]) -> bool {
        self.calls.cancel(ds_id)
    }
}

/// The client's raw id as rmcp reads it (`None`: rmcp would refuse it). Most ids are small
/// numbers or plain strings, read here without a parser; any other goes through `serde_json`.
fn request_id(raw: &[u8]) -> Option<RequestId> {
    if let Some(text) = raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\""))
        && !text.iter().any(|&b| b == b'\\' || b < 0x20)
    {
        return std::str::from_utf8(text)
            .ok()
            .map(|text| RequestId::String(text.into()));
    }
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    if (1..=18).contains(&digits.len())
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits.len() == 1)
    {
        return std::str::from_utf8(raw)
            .ok()
            .and_then(|n| n.parse().ok())
            .map(RequestId::Number);
    }
    serde_json::from_slice(raw).ok()
}

impl<W: AsyncWrite + Unpin + Send + 'static> Divert for StdioLane<W> {
    fn divert(&self, line: &[u8]) -> bool {
        match classify(line) {
            Incoming::ListTools(id) if self.may_list() => self.list_tools(id),
            Incoming::Initialize { legacy } => {
                self.legacy_handshake.store(legacy, Ordering::Release);
                false
            }
            Incoming::Call(call) => self.peer.get().is_some_and(|peer| self.take(peer, &call)),
            Incoming::Cancelled(id) => self.peer.get().is_some() && self.cancel(id),
            Incoming::ListTools(_) | Incoming::Response { .. } | Incoming::Other => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_without_a_parser_are_read_as_rmcp_reads_them() {
        for raw in [
            "0",
            "7",
            "-3",
            "123456789012345678",
            "1234567890123456789",
            "\"a\"",
            "\"\"",
            "\"é\"",
            "\"a\\\"b\"",
            "\"\\u0041\"",
            "01",
            "1.5",
            "1e3",
            "-",
            "null",
            "[1]",
            "{}",
            "true",
        ] {
            assert_eq!(
                request_id(raw.as_bytes()),
                serde_json::from_str::<RequestId>(raw).ok(),
                "{raw}"
            );
        }
    }
}
