//! Listing a server's tools: every page, with the guards that peers learned the hard way, and
//! the members rmcp's `Tool` does not model, from the service's [`ToolListTap`] if it has one.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::Duration,
};

use rmcp::{
    Peer, RoleClient,
    model::{
        CancelledNotificationParam, ClientRequest, JsonObject, ListToolsRequest, ListToolsResult,
        PaginatedRequestParams, RequestId, ServerResult,
    },
    service::PeerRequestOptions,
};

use crate::{PegBoardError, ToolListTap};

/// What a listing found: the tools in the server's order, and for each the members rmcp's
/// `Tool` does not model (`None`: it had none, or the service has no tap).
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    pub(crate) tools: Vec<rmcp::model::Tool>,
    pub(crate) extras: Vec<Option<Arc<JsonObject>>>,
}

impl Discovered {
    /// The extra members by the tool's name at its server (the first of a name, should a broken
    /// server list one twice: such a listing is refused as a clash anyway).
    pub(crate) fn into_parts(self) -> (Vec<rmcp::model::Tool>, HashMap<String, Arc<JsonObject>>) {
        let mut by_name = HashMap::new();
        for (tool, extra) in self.tools.iter().zip(self.extras) {
            if let Some(extra) = extra {
                by_name.entry(tool.name.to_string()).or_insert(extra);
            }
        }
        (self.tools, by_name)
    }
}

/// Limits on what one server may send while it is being listed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DiscoveryLimits {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_pages: usize,
    pub(crate) max_tools: usize,
}

/// List every page of a server's tools.
///
/// Follows `nextCursor`, but stops at a cursor it has seen before (a server whose cursor never
/// advances made other aggregators loop forever), and refuses more than `max_pages` pages or
/// `max_tools` tools. The whole listing shares one timeout; when it expires, the pending request
/// is dropped, and `notifications/cancelled` is sent for it.
///
/// Each page is asked of the server itself, never answered from rmcp's response cache: the
/// board lists when it wants the server's current tools (added, `tools/list_changed`, a
/// refresh), and only an answer read by the transport carries what `tap` keeps.
pub(crate) async fn list_all_tools(
    peer: &Peer<RoleClient>,
    namespace: Option<&str>,
    limits: DiscoveryLimits,
    tap: Option<&ToolListTap>,
) -> Result<Discovered, PegBoardError> {
    let listing = list_pages(peer, namespace, limits, tap);
    match limits.timeout {
        None => listing.await,
        Some(after) => {
            tokio::time::timeout(after, listing)
                .await
                .map_err(|_| PegBoardError::Timeout {
                    operation: "tools/list".to_string(),
                    namespace: namespace.map(str::to_string),
                    after,
                })?
        }
    }
}

async fn list_pages(
    peer: &Peer<RoleClient>,
    namespace: Option<&str>,
    limits: DiscoveryLimits,
    tap: Option<&ToolListTap>,
) -> Result<Discovered, PegBoardError> {
    let namespace_owned = || namespace.map(str::to_string);
    if peer.is_transport_closed() {
        return Err(PegBoardError::ServiceClosed {
            namespace: namespace_owned(),
        });
    }
    // A server that declares no tools (one that offers only prompts or resources) is not
    // asked: it would answer -32601, and it belongs on the board for what it does offer.
    if peer
        .peer_info()
        .is_some_and(|info| info.capabilities.tools.is_none())
    {
        return Ok(Discovered::default());
    }
    let mut tools: Vec<rmcp::model::Tool> = Vec::new();
    let mut extras: Vec<Option<Arc<JsonObject>>> = Vec::new();
    let mut positions: HashMap<String, usize> = HashMap::new();
    let mut seen_cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for _page in 0..limits.max_pages {
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let (page, mut page_extras) =
            list_page(peer, params, tap)
                .await
                .map_err(|source| match source {
                    rmcp::ServiceError::TransportClosed => PegBoardError::ServiceClosed {
                        namespace: namespace_owned(),
                    },
                    source => PegBoardError::Discovery {
                        namespace: namespace_owned(),
                        source,
                    },
                })?;
        // A server that repeats a page (its cursor did not advance) sends the same tools
        // again: a tool equal to one of an earlier page is kept once. Duplicates within one page
        // are kept, and refused as a clash when registered: that server is broken, not stuck.
        let start = tools.len();
        for tool in page.tools {
            let extra = page_extras
                .as_mut()
                .and_then(|page| page.remove(tool.name.as_ref()));
            let repeated = positions
                .get(tool.name.as_ref())
                .is_some_and(|&at| tools.get(at) == Some(&tool) && extras.get(at) == Some(&extra));
            if !repeated {
                tools.push(tool);
                extras.push(extra);
            }
        }
        for (at, tool) in tools.iter().enumerate().skip(start) {
            positions.entry(tool.name.to_string()).or_insert(at);
        }
        if tools.len() > limits.max_tools {
            return Err(PegBoardError::TooManyTools {
                namespace: namespace_owned(),
                what: format!("listed more than {} tools", limits.max_tools),
            });
        }
        match page.next_cursor {
            None => return Ok(Discovered { tools, extras }),
            Some(next) if next.is_empty() => return Ok(Discovered { tools, extras }),
            Some(next) => {
                if !seen_cursors.insert(next.clone()) {
                    tracing::warn!(
                        namespace = namespace.unwrap_or(""),
                        cursor = %next,
                        "server repeated a tools/list cursor; keeping the {} tools listed so far",
                        tools.len()
                    );
                    return Ok(Discovered { tools, extras });
                }
                cursor = Some(next);
            }
        }
    }
    Err(PegBoardError::TooManyTools {
        namespace: namespace_owned(),
        what: format!("sent more than {} pages of tools", limits.max_pages),
    })
}

/// Ask for one page, and take what `tap` kept of its answer.
async fn list_page(
    peer: &Peer<RoleClient>,
    params: Option<PaginatedRequestParams>,
    tap: Option<&ToolListTap>,
) -> Result<(ListToolsResult, Option<crate::tap::Extras>), rmcp::ServiceError> {
    let request = ClientRequest::ListToolsRequest(ListToolsRequest {
        method: Default::default(),
        params,
        extensions: Default::default(),
    });
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let mut unanswered = CancelOnDrop {
        peer,
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    let id = unanswered.id.take();
    match answer? {
        // The transport showed the answer to the tap before rmcp read it, so it is there now.
        ServerResult::ListToolsResult(page) => {
            Ok((page, tap.zip(id).and_then(|(tap, id)| tap.take(&id))))
        }
        _ => Err(rmcp::ServiceError::UnexpectedResponse),
    }
}

/// Sends `notifications/cancelled` for a page request whose answer is no longer awaited (the
/// listing timed out or was dropped), as rmcp's own `list_tools` does.
struct CancelOnDrop<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        // Dropped inside the runtime that polled the listing; without one, nobody can send.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let reason = "request abandoned by the caller".to_string();
            let cancel = CancelledNotificationParam::new(Some(id), Some(reason));
            let _ = peer.notify_cancelled(cancel).await;
        });
    }
}
