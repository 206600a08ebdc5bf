//! Listing a server's tools: every page, with the guards that peers learned the hard way.

use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use rmcp::{Peer, RoleClient, model::PaginatedRequestParams};

use crate::PegBoardError;

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
/// is dropped, and rmcp sends `notifications/cancelled` for it.
pub(crate) async fn list_all_tools(
    peer: &Peer<RoleClient>,
    namespace: Option<&str>,
    limits: DiscoveryLimits,
) -> Result<Vec<rmcp::model::Tool>, PegBoardError> {
    let listing = list_pages(peer, namespace, limits);
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
) -> Result<Vec<rmcp::model::Tool>, PegBoardError> {
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
        return Ok(Vec::new());
    }
    let mut tools: Vec<rmcp::model::Tool> = Vec::new();
    let mut positions: HashMap<String, usize> = HashMap::new();
    let mut seen_cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for _page in 0..limits.max_pages {
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer
            .list_tools(params)
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
            let repeated = positions
                .get(tool.name.as_ref())
                .is_some_and(|&at| tools.get(at) == Some(&tool));
            if !repeated {
                tools.push(tool);
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
            None => return Ok(tools),
            Some(next) if next.is_empty() => return Ok(tools),
            Some(next) => {
                if !seen_cursors.insert(next.clone()) {
                    tracing::warn!(
                        namespace = namespace.unwrap_or(""),
                        cursor = %next,
                        "server repeated a tools/list cursor; keeping the {} tools listed so far",
                        tools.len()
                    );
                    return Ok(tools);
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
