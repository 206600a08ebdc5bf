//! Resources on the board: every server's resources and templates with their URIs namespaced
//! ([`crate::uri`]), reads and subscriptions routed back by the URI's alias.

use std::sync::Arc;

use rmcp::{
    Peer, RoleClient,
    model::{
        PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Resource, ResourceTemplate,
    },
};

use super::{PegBoard, catalog::Upstream};
use crate::{Extension, PegBoardError};

/// Where a board resource URI goes: the server and the URI as that server knows it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResourceTarget {
    /// The service's connection.
    pub peer: Peer<RoleClient>,
    /// The URI at that service.
    pub original: String,
    /// The namespace the service was added under.
    pub namespace: Option<Arc<str>>,
    /// The alias its URIs carry on the board (`None`: no namespace, URIs verbatim).
    pub alias: Option<String>,
    /// What was given to [`ServiceOptions::extension`](crate::ServiceOptions::extension).
    pub extension: Option<Extension>,
}

impl PegBoard {
    /// Every resource of every live server that offers resources, URIs namespaced
    /// (`docs+file:///x`), in board order. A server that fails to list is left out (logged).
    ///
    /// ```
    /// # async fn demo() {
    /// assert!(pegboard::PegBoard::new().list_resources().await.is_empty());
    /// # }
    /// ```
    pub async fn list_resources(&self) -> Vec<Resource> {
        self.list_with_uris(
            "resources/list",
            |peer, params| async move {
                let page = peer.list_resources(params).await?;
                Ok((page.resources, page.next_cursor))
            },
            |resource| &mut resource.uri,
        )
        .await
    }

    /// Every resource template of every live server that offers resources, URI templates
    /// namespaced like URIs (`docs+file:///{path}`), in board order.
    ///
    /// ```
    /// # async fn demo() {
    /// assert!(pegboard::PegBoard::new().list_resource_templates().await.is_empty());
    /// # }
    /// ```
    pub async fn list_resource_templates(&self) -> Vec<ResourceTemplate> {
        self.list_with_uris(
            "resources/templates/list",
            |peer, params| async move {
                let page = peer.list_resource_templates(params).await?;
                Ok((page.resource_templates, page.next_cursor))
            },
            |template| &mut template.uri_template,
        )
        .await
    }

    /// One listing from every server with resources, each item's URI (`uri_of`) namespaced
    /// with its server's alias, in board order.
    async fn list_with_uris<T, F, Fut>(
        &self,
        what: &str,
        fetch: F,
        uri_of: impl Fn(&mut T) -> &mut String,
    ) -> Vec<T>
    where
        F: Fn(Peer<RoleClient>, Option<PaginatedRequestParams>) -> Fut + Copy,
        Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), rmcp::ServiceError>>,
    {
        let lists = self
            .gather(&self.resource_servers(), |up| async move {
                up.list_all(what, self.limits(), fetch).await
            })
            .await;
        let mut items = Vec::new();
        for (up, listed) in lists {
            let alias = up.alias();
            for mut item in listed {
                if let Some(alias) = &alias {
                    let uri = uri_of(&mut item);
                    *uri = crate::uri::encode(alias, uri);
                }
                items.push(item);
            }
        }
        items
    }

    /// Read the resource the board shows as `uri` from its server; the URIs of the contents
    /// are namespaced the same way.
    ///
    /// # Errors
    /// [`PegBoardError::ResourceNotFound`] when the URI names no server of the board; else the
    /// server's error, a timeout or a closed service.
    ///
    /// ```
    /// # async fn demo() {
    /// let missing = pegboard::PegBoard::new().read_resource("docs+file:///x").await.unwrap_err();
    /// assert!(missing.to_string().contains("not on the board"));
    /// # }
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, PegBoardError> {
        match self
            .resource_once(ReadResourceRequestParams::new(uri))
            .await?
        {
            (_, ReadResourceResponse::Complete(result)) => Ok(result),
            // `input_required` (2026-07-28): this call has no client to ask.
            (up, _) => Err(up.failed(
                format!("resources/read `{}`", crate::error::shown(uri)),
                rmcp::ServiceError::UnexpectedResponse,
            )),
        }
    }

    /// One `resources/read` of the resource the board shows as `params.uri`, with the rest of
    /// `params` (a retry's `inputResponses` and `requestState`) as given: a server of the
    /// 2026-07-28 generation may answer `input_required` (multi round-trip requests,
    /// SEP-2322), which the caller answers and retries with. The URIs of complete contents are
    /// namespaced as in [`PegBoard::read_resource`].
    ///
    /// # Errors
    /// As [`PegBoard::read_resource`].
    ///
    /// ```
    /// # async fn demo() {
    /// let params = rmcp::model::ReadResourceRequestParams::new("docs+file:///x");
    /// assert!(pegboard::PegBoard::new().read_resource_once(params).await.is_err());
    /// # }
    /// ```
    pub async fn read_resource_once(
        &self,
        params: ReadResourceRequestParams,
    ) -> Result<ReadResourceResponse, PegBoardError> {
        Ok(self.resource_once(params).await?.1)
    }

    async fn resource_once(
        &self,
        mut params: ReadResourceRequestParams,
    ) -> Result<(Upstream, ReadResourceResponse), PegBoardError> {
        let uri = std::mem::take(&mut params.uri);
        let (up, original) = self.resource_route(&uri)?;
        params.uri = original;
        let peer = up.peer.clone();
        let mut response = up
            .ask(
                || format!("resources/read `{}`", crate::error::shown(&uri)),
                peer.read_resource_once(params),
            )
            .await?;
        if let (ReadResourceResponse::Complete(result), Some(alias)) = (&mut response, up.alias()) {
            for contents in &mut result.contents {
                crate::uri::encode_contents(contents, &alias);
            }
        }
        Ok((up, response))
    }

    /// The server behind a board resource URI (or URI template), for requests the board does
    /// not make itself, such as `resources/subscribe`.
    ///
    /// # Errors
    /// [`PegBoardError::ResourceNotFound`], with how the board's URIs look.
    ///
    /// ```
    /// assert!(pegboard::PegBoard::new().resource_target("docs+file:///x").is_err());
    /// ```
    pub fn resource_target(&self, uri: &str) -> Result<ResourceTarget, PegBoardError> {
        let (up, original) = self.resource_route(uri)?;
        Ok(ResourceTarget {
            alias: up.alias(),
            peer: up.peer,
            original,
            namespace: up.namespace,
            extension: up.extension,
        })
    }

    /// The server of a board URI and the URI at that server: by the alias before the first `+`
    /// (see [`crate::uri`]); a URI without a known alias goes to the first server added without
    /// a namespace, whose URIs are shown verbatim.
    pub(super) fn resource_route(&self, uri: &str) -> Result<(Upstream, String), PegBoardError> {
        let servers = self.resource_servers();
        if let Some((alias, original)) = crate::uri::split(uri)
            && let Some(up) = servers.iter().find(|up| {
                // Schemes are case-insensitive, and URL libraries lower-case them.
                up.alias().is_some_and(|a| a.eq_ignore_ascii_case(alias))
            })
        {
            return Ok((up.clone(), original));
        }
        if let Some(up) = servers.iter().find(|up| up.namespace.is_none()) {
            return Ok((up.clone(), uri.to_string()));
        }
        let aliases: Vec<String> = servers
            .iter()
            .filter_map(Upstream::alias)
            .map(|alias| format!("`{alias}+`"))
            .collect();
        let hint = if aliases.is_empty() {
            "no server on the board offers resources".to_string()
        } else {
            format!(
                "its URI should start with the alias of a server ({}; `ui://` URIs carry it after `ui://`), as resources/list shows",
                aliases.join(", ")
            )
        };
        Err(PegBoardError::ResourceNotFound {
            uri: uri.to_string(),
            hint,
        })
    }

    /// Why a service with resources cannot join under `namespace`: a live service that offers
    /// resources already carries the same URI alias (ASCII case aside), so the board could not
    /// tell their URIs apart.
    pub(super) fn alias_clash(
        registry: &crate::registry::Registry,
        namespace: Option<&str>,
        peer: &Peer<RoleClient>,
    ) -> Option<PegBoardError> {
        let namespace = namespace?;
        let alias = crate::uri::alias(namespace);
        let offers = |peer: &Peer<RoleClient>| {
            peer.peer_info()
                .is_some_and(|info| info.capabilities.resources.is_some())
        };
        if !offers(peer) {
            return None;
        }
        let (_, holder) = registry.stored().find(|(_, slot)| {
            !slot.is_withdrawn()
                && !slot.peer.is_transport_closed()
                && offers(&slot.peer)
                && slot
                    .namespace
                    .as_deref()
                    .is_some_and(|ns| crate::uri::alias(ns).eq_ignore_ascii_case(&alias))
        })?;
        Some(PegBoardError::InvalidNamespace {
            namespace: namespace.to_string(),
            reason: format!(
                "its resource URIs would start with `{alias}+`, as those of namespace `{}` do, so the board could not tell them apart; add the server under another namespace",
                holder.namespace.as_deref().unwrap_or_default()
            ),
        })
    }

    fn resource_servers(&self) -> Vec<Upstream> {
        self.upstreams(|caps| caps.resources.is_some())
    }
}
