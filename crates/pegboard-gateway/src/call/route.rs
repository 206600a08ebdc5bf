//! [`Route`]: the first step of every call, whichever front and path took it — the board name
//! resolved to its server's connection and the tool's original name.

use std::sync::Arc;

use pegboard::{PegBoard, PegBoardError, ToolTarget};

use super::caller::Caller;
use crate::{
    identity::Client,
    protocol::failure::Failure,
    telemetry::Transport,
    upstream::{Hub, PlainTool},
};

/// Where a call goes.
pub(crate) struct Route {
    /// The server's connection, the tool's original name, its timeout.
    pub(crate) target: ToolTarget,
    /// The connection's calls in flight (absent for services the gateway did not connect).
    pub(crate) hub: Option<Arc<Hub>>,
    /// The tool, when its connection knows it answers plain calls (the hot path: no task).
    pub(crate) plain: Option<Arc<PlainTool>>,
}

impl Route {
    /// `name` on the board as `client` may see it, on its server's shared connection.
    ///
    /// # Errors
    /// The board's: no such tool (with close matches among those the client may see), a closed
    /// server, a tool withheld by its pins; [`Failure::Hidden`] for a tool the client may not
    /// see (answered exactly as one not on the board); a server that waits for a login says
    /// which command to run.
    pub(crate) fn shared(board: &PegBoard, name: &str, client: &Client) -> Result<Self, Failure> {
        let view = (!client.sees_everything()).then(|| client.view(board));
        if let Some(view) = &view
            && !view.may_see_tool(name)
        {
            let not_found = board.not_found_for(name, |n| view.may_see_tool(n));
            return Err(match board.get_tool(name) {
                Some(_) => Failure::Hidden(not_found),
                None => Failure::Board(not_found),
            });
        }
        let target = match board.tool_target(name) {
            Ok(target) => target,
            Err(PegBoardError::ToolNotFound { .. }) => {
                if let Some(needs_login) = crate::oauth::pending().message_for_tool(name) {
                    return Err(Failure::Unanswered(needs_login));
                }
                return Err(Failure::Board(match &view {
                    Some(view) => board.not_found_for(name, |n| view.may_see_tool(n)),
                    None => board.not_found_for(name, |_| true),
                }));
            }
            Err(error) => return Err(error.into()),
        };
        let hub = target.extension.as_ref().and_then(|e| e.get::<Hub>());
        let plain = hub
            .as_ref()
            .and_then(|hub| hub.plain_tool(&target.original));
        Ok(Self { target, hub, plain })
    }

    /// `name` on the board for `caller`: a `"session": "per-client"` server's call goes to the
    /// caller session's own connection (opened at its first call).
    ///
    /// # Errors
    /// As [`Route::shared`], and [`Failure::Open`] when the session's own connection cannot be
    /// opened.
    pub(crate) async fn resolve(
        board: &PegBoard,
        name: &str,
        caller: &Caller<'_>,
    ) -> Result<Self, Failure> {
        let mut route = Self::shared(board, name, caller.client)?;
        let opener = route
            .hub
            .as_ref()
            .and_then(|hub| hub.per_session())
            .cloned();
        if let (Some(opener), Some(session)) = (opener, caller.session) {
            let (peer, own) = session
                .own_connection(&opener)
                .await
                .map_err(Failure::Open)?;
            route.target.peer = peer;
            route.plain = own.plain_tool(&route.target.original);
            route.hub = Some(own);
        }
        Ok(route)
    }

    /// The namespace the tool's server is on the board under.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.target.namespace.as_deref()
    }

    /// The server's name in metrics and logs (its namespace, or its config name without one).
    pub(crate) fn server_name(&self) -> &str {
        match &self.hub {
            Some(hub) => hub.namespace(),
            None => self.namespace().unwrap_or(crate::telemetry::UNKNOWN),
        }
    }

    /// The route's slot for what telemetry keeps of its tool (a tool known to answer plain
    /// calls has one).
    pub(crate) fn memo(&self) -> Option<&crate::telemetry::ToolMemo> {
        self.plain.as_ref().map(|tool| &tool.memo)
    }

    /// The server's `maxResultTokens`, if it has one.
    pub(crate) fn result_cap(&self) -> Option<usize> {
        self.hub.as_ref().and_then(|hub| hub.result_cap())
    }

    /// How the gateway reaches the server: a child's pipes (stdio, which has a lane), or TCP.
    pub(crate) fn transport(&self) -> Transport {
        match self.hub.as_ref().and_then(|hub| hub.lane()) {
            Some(_) => Transport::Pipe,
            None => Transport::Tcp,
        }
    }
}
