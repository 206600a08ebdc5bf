//! Reaching a service's connection directly: for embedders that forward more than `tools/call`
//! (progress, cancellation, server-to-client requests), as the gateway does.

use std::{sync::Arc, time::Duration};

use rmcp::{Peer, RoleClient};

use super::{PegBoard, calls::missing};
use crate::{ArcStr, Extension, PegBoardError};

/// Where a board tool's calls go, with what is needed to make the call yourself.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolTarget {
    /// The service's connection.
    pub peer: Peer<RoleClient>,
    /// The tool's name at that service.
    pub original: ArcStr,
    /// The namespace the service was added under.
    pub namespace: Option<Arc<str>>,
    /// The service's call timeout, else the board's.
    pub timeout: Option<Duration>,
    /// What was given to [`ServiceOptions::extension`](crate::ServiceOptions::extension).
    pub extension: Option<Extension>,
}

impl PegBoard {
    /// The connection and original name behind the tool the LLM knows as `tool_name`.
    ///
    /// # Errors
    /// [`PegBoardError::ToolNotFound`] (with close matches), [`PegBoardError::ToolWithheld`],
    /// [`PegBoardError::ServiceClosed`].
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().tool_target("web-search").is_err());
    /// ```
    pub fn tool_target(&self, tool_name: &str) -> Result<ToolTarget, PegBoardError> {
        let registry = self.snapshot();
        let entry = registry
            .tools
            .get(tool_name)
            .ok_or_else(|| missing(&registry, tool_name))?;
        let slot = registry
            .service(entry.service)
            .ok_or(PegBoardError::UnknownService {
                index: entry.service.index(),
            })?;
        if slot.peer.is_transport_closed() {
            return Err(PegBoardError::ServiceClosed {
                namespace: slot.namespace.as_deref().map(str::to_string),
            });
        }
        Ok(ToolTarget {
            peer: slot.peer.clone(),
            original: entry.original.clone(),
            namespace: slot.namespace.clone(),
            timeout: slot.call_timeout().or(self.inner.call_timeout),
            extension: slot.options.extension.clone(),
        })
    }

    /// The connections of every live service with the extension it was added with, for
    /// requests that go to all of them (such as `logging/setLevel`).
    pub fn service_peers(&self) -> Vec<(Peer<RoleClient>, Option<Extension>)> {
        self.snapshot()
            .services
            .iter()
            .flatten()
            .filter(|slot| !slot.peer.is_transport_closed())
            .map(|slot| (slot.peer.clone(), slot.options.extension.clone()))
            .collect()
    }
}
