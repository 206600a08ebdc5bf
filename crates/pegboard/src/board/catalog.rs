//! What prompts, resources and completions share: the live services that offer a kind of item,
//! listing every page of them under the board's limits, and one request with its timeout.
//!
//! Unlike tools, prompts and resources are not kept in the snapshot: they are listed from the
//! servers when asked (resource sets are large and change per call, such as a server's
//! per-session resources), so they are never stale.

use std::{collections::HashSet, future::Future, sync::Arc, time::Duration};

use rmcp::{
    Peer, RoleClient, ServiceError,
    model::{PaginatedRequestParams, ServerCapabilities},
};

use super::PegBoard;
use crate::{Extension, PegBoardError, discovery::DiscoveryLimits};

/// A live service, as the catalog reaches it.
#[derive(Clone)]
pub(super) struct Upstream {
    pub(super) namespace: Option<Arc<str>>,
    pub(super) peer: Peer<RoleClient>,
    pub(super) timeout: Option<Duration>,
    pub(super) extension: Option<Extension>,
    pub(super) filter: Option<Arc<dyn crate::ListingFilter>>,
}

impl Upstream {
    pub(super) fn namespace(&self) -> Option<String> {
        self.namespace.as_deref().map(str::to_string)
    }

    /// The alias its resource URIs carry (`None`: added without a namespace, URIs verbatim).
    pub(super) fn alias(&self) -> Option<String> {
        self.namespace.as_deref().map(crate::uri::alias)
    }

    /// One request to this service, under its call timeout, errors named after `request`.
    pub(super) async fn ask<T>(
        &self,
        request: impl Fn() -> String,
        call: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, PegBoardError> {
        let answer = match self.timeout {
            None => call.await,
            Some(after) => {
                tokio::time::timeout(after, call)
                    .await
                    .map_err(|_| PegBoardError::Timeout {
                        operation: request(),
                        namespace: self.namespace(),
                        after,
                    })?
            }
        };
        answer.map_err(|source| self.failed(request(), source))
    }

    pub(super) fn failed(&self, request: String, source: ServiceError) -> PegBoardError {
        match source {
            ServiceError::TransportClosed => PegBoardError::ServiceClosed {
                namespace: self.namespace(),
            },
            source => PegBoardError::Upstream {
                request,
                namespace: self.namespace(),
                source,
            },
        }
    }

    /// Every page of a listing (`fetch` gets the cursor and returns items and the next cursor),
    /// stopping at a repeated cursor, refusing more than the board's page or item limits.
    pub(super) async fn list_all<T, F, Fut>(
        &self,
        what: &str,
        limits: DiscoveryLimits,
        mut fetch: F,
    ) -> Result<Vec<T>, PegBoardError>
    where
        F: FnMut(Peer<RoleClient>, Option<PaginatedRequestParams>) -> Fut,
        Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
    {
        let pages = async {
            let mut items = Vec::new();
            let mut seen = HashSet::new();
            let mut cursor: Option<String> = None;
            for _page in 0..limits.max_pages {
                let params = cursor
                    .take()
                    .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
                let (page, next) = fetch(self.peer.clone(), params)
                    .await
                    .map_err(|source| self.failed(what.to_string(), source))?;
                items.extend(page);
                if items.len() > limits.max_tools {
                    return Err(PegBoardError::TooManyTools {
                        namespace: self.namespace(),
                        what: format!("listed more than {} items in {what}", limits.max_tools),
                    });
                }
                match next {
                    Some(next) if !next.is_empty() && seen.insert(next.clone()) => {
                        cursor = Some(next);
                    }
                    _ => return Ok(items),
                }
            }
            Err(PegBoardError::TooManyTools {
                namespace: self.namespace(),
                what: format!("sent more than {} pages of {what}", limits.max_pages),
            })
        };
        match limits.timeout {
            None => pages.await,
            Some(after) => {
                tokio::time::timeout(after, pages)
                    .await
                    .map_err(|_| PegBoardError::Timeout {
                        operation: what.to_string(),
                        namespace: self.namespace(),
                        after,
                    })?
            }
        }
    }
}

impl PegBoard {
    /// The live services (in board order) whose server declared a capability `offers`.
    pub(super) fn upstreams(&self, offers: impl Fn(&ServerCapabilities) -> bool) -> Vec<Upstream> {
        let registry = self.snapshot();
        registry
            .stored()
            .filter(|(_, slot)| !slot.is_withdrawn() && !slot.peer.is_transport_closed())
            .filter(|(_, slot)| {
                slot.peer
                    .peer_info()
                    .is_some_and(|info| offers(&info.capabilities))
            })
            .map(|(_, slot)| Upstream {
                namespace: slot.namespace.clone(),
                peer: slot.peer.clone(),
                timeout: slot.call_timeout().or(self.inner.call_timeout),
                extension: slot.options.extension.clone(),
                filter: slot.options.filter.clone(),
            })
            .collect()
    }

    pub(super) fn limits(&self) -> DiscoveryLimits {
        self.inner.limits
    }

    /// List one kind of item from every service that offers it, all at once; a service that
    /// fails is left out with a warning, so one broken server never empties the list.
    pub(super) async fn gather<T, F, Fut>(
        &self,
        upstreams: &[Upstream],
        list: F,
    ) -> Vec<(Upstream, Vec<T>)>
    where
        F: Fn(Upstream) -> Fut,
        Fut: Future<Output = Result<Vec<T>, PegBoardError>>,
    {
        let lists = futures::future::join_all(upstreams.iter().cloned().map(&list)).await;
        upstreams
            .iter()
            .cloned()
            .zip(lists)
            .filter_map(|(up, listed)| match listed {
                Ok(items) => Some((up, items)),
                Err(error) => {
                    tracing::warn!(%error, "left out of the merged list");
                    None
                }
            })
            .collect()
    }
}
