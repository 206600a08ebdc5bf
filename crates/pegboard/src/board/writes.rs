//! Writes that put tools on the board or take them off by name or namespace. Each is one
//! [`transaction`](PegBoard::transaction): all of it lands, or none of it.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
};

use arcstr::ArcStr;

use super::{PegBoard, pending::Pending, refresh::follow_changes};
use crate::{
    BoxedService, PegBoardError, ServiceOptions, Tool,
    discovery::{self, Discovered},
    listing,
    registry::{Origin, ServiceId},
    slot::{ServiceSlot, Withholding},
};

/// What [`PegBoard::add_service_with`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Added {
    /// The index the service is stored under (for `register_tool`, `remove_service`, ...).
    pub index: usize,
    /// How many of its tools were registered.
    pub tools: usize,
    /// How many of its tools its [`ListingFilter`](crate::ListingFilter) withheld.
    pub withheld: usize,
}

impl PegBoard {
    /// Discover every tool of `service`, register them under `namespace`, and store the service.
    ///
    /// All pages of `tools/list` are followed. Each tool's name is prefixed with the namespace
    /// (`web` + `search` -> `web-search`; `None` or `""` keep names as they are). Either all of the
    /// service's tools are registered, or none: on any clash (with the board, or between two tools
    /// of the service) the error names the tool and the namespace that holds it, and the board is
    /// exactly as it was. Returns the number of tools registered.
    ///
    /// The service is stored at a new index, one past the highest ever used: indices never shift
    /// and are never reused, so after a removal the new index is not `service_count() - 1`.
    /// [`add_service_with`](Self::add_service_with) returns it. On an error the service is
    /// dropped, which closes it.
    ///
    /// A server that offers resources is refused a namespace whose URI alias
    /// ([`crate::uri::alias`]) another live server with resources carries already.
    ///
    /// # Errors
    /// [`PegBoardError::DuplicateTool`], [`PegBoardError::InvalidNamespace`],
    /// [`PegBoardError::InvalidName`], [`PegBoardError::Discovery`], [`PegBoardError::Timeout`],
    /// [`PegBoardError::ServiceClosed`], [`PegBoardError::TooManyTools`],
    /// [`PegBoardError::ShutDown`].
    ///
    /// ```no_run
    /// # async fn demo(service: pegboard::BoxedService, other: pegboard::BoxedService) -> Result<(), pegboard::PegBoardError> {
    /// let mut pegboard = pegboard::PegBoard::new();
    /// pegboard.add_service(Some("web".to_string()), service).await?; // "search" is now "web-search"
    /// pegboard.add_service(None, other).await?;                      // names kept as they are
    /// # Ok(()) }
    /// ```
    pub async fn add_service(
        &self,
        namespace: Option<String>,
        service: BoxedService,
    ) -> Result<usize, PegBoardError> {
        self.add_service_with(namespace, service, ServiceOptions::default())
            .await
            .map(|added| added.tools)
    }

    /// [`add_service`](Self::add_service) with a tool filter, a call timeout for this service, or
    /// a [`ToolListWatch`](crate::client::ToolListWatch) to follow its `tools/list_changed`.
    ///
    /// Returns where the service was stored and how many tools were registered.
    ///
    /// # Errors
    /// As [`add_service`](Self::add_service).
    pub async fn add_service_with(
        &self,
        namespace: Option<String>,
        service: BoxedService,
        mut options: ServiceOptions,
    ) -> Result<Added, PegBoardError> {
        if self.snapshot().shut_down {
            return Err(PegBoardError::ShutDown);
        }
        let namespace: Option<Arc<str>> = self
            .inner
            .naming
            .namespace(namespace.as_deref())?
            .map(Arc::from);
        let peer = service.peer().clone();
        let tools = discovery::list_all_tools(
            &peer,
            namespace.as_deref(),
            self.inner.limits,
            options.tool_list_tap.as_ref(),
        )
        .await?;
        let (pending, withheld) = self.prepare(namespace.as_ref(), &peer, tools, &options)?;
        let count = pending.len();
        let withheld_count = withheld.len();
        let watch = options.watch.take();

        let (id, slot) = self.transaction(|draft| {
            // Checked again here: shutdown may have run while the service was being listed.
            if draft.shut_down {
                return Err(PegBoardError::ShutDown);
            }
            if let Some(clash) = Self::alias_clash(draft, namespace.as_deref(), &peer) {
                return Err(clash);
            }
            if let Some(clash) = pending.iter().find(|p| draft.tools.contains_key(&p.name)) {
                return Err(PegBoardError::DuplicateTool {
                    name: clash.name.to_string(),
                    namespace: draft.owner_of(&clash.name).flatten(),
                });
            }
            let next = draft.to_mut();
            let id = next.next_service_id();
            let slot = Arc::new(ServiceSlot::new(
                namespace.clone(),
                service,
                options,
                withheld,
            ));
            next.services.push(Some(Arc::clone(&slot)));
            for p in pending {
                let (name, entry) = p.into_entry(id);
                next.tools.insert(name, entry);
            }
            Ok((id, slot))
        })?;
        if let Some(watch) = watch {
            let task = tokio::spawn(follow_changes(Arc::downgrade(&self.inner), id, watch));
            slot.set_watcher(task.abort_handle());
        }
        tracing::debug!(
            namespace = namespace.as_deref().unwrap_or(""),
            index = id.index(),
            count,
            "service added"
        );
        Ok(Added {
            index: id.index(),
            tools: count,
            withheld: withheld_count,
        })
    }

    /// Name, filter and check a service's tools against each other (not yet against the board);
    /// also returns what its listing filter withheld, by board name.
    fn prepare(
        &self,
        namespace: Option<&Arc<str>>,
        peer: &rmcp::Peer<rmcp::RoleClient>,
        tools: Discovered,
        options: &ServiceOptions,
    ) -> Result<(Vec<Pending>, Withholding), PegBoardError> {
        let (tools, withheld) = self.filtered(namespace, peer, tools, options);
        let mut pending: Vec<Pending> = Vec::with_capacity(tools.len());
        let mut names: HashSet<ArcStr> = HashSet::with_capacity(tools.len());
        for tool in tools {
            let p = self.pending(namespace, tool, Origin::Discovered)?;
            if !names.insert(p.name.clone()) {
                return Err(PegBoardError::DuplicateTool {
                    name: p.name.to_string(),
                    namespace: namespace.map(|ns| ns.to_string()),
                });
            }
            pending.push(p);
        }
        Ok((pending, withheld))
    }

    /// A service's tools through its allow and deny lists, then its [`ListingFilter`], as board
    /// tools with their extra members; what the filter withheld comes back by board name.
    pub(super) fn filtered(
        &self,
        namespace: Option<&Arc<str>>,
        peer: &rmcp::Peer<rmcp::RoleClient>,
        discovered: Discovered,
        options: &ServiceOptions,
    ) -> (Vec<Tool>, Withholding) {
        let (mut tools, mut extras) = discovered.into_parts();
        tools.retain(|tool| options.admits(&tool.name));
        let info = peer.peer_info();
        let server = info.as_deref().and_then(|info| info.server_info.as_ref());
        let naming = &self.inner.naming;
        let namespace = namespace.map(AsRef::as_ref);
        let (tools, withheld) = listing::apply(
            options.filter.as_ref(),
            namespace,
            server,
            naming,
            tools,
            Some(&extras),
            |filter, listing| filter.tools(listing),
        );
        let tools = with_extras(tools, &mut extras);
        let withheld = withheld
            .into_iter()
            .filter_map(|w| {
                let name = naming.full_name(namespace, &w.name).ok()?;
                Some((ArcStr::from(name), w.reason))
            })
            .collect();
        (tools, withheld)
    }

    pub(super) fn pending(
        &self,
        namespace: Option<&Arc<str>>,
        tool: Tool,
        origin: Origin,
    ) -> Result<Pending, PegBoardError> {
        let original = tool.name.clone();
        let name = ArcStr::from(
            self.inner
                .naming
                .full_name(namespace.map(AsRef::as_ref), &original)?,
        );
        Ok(Pending {
            tool: tool.renamed(name.clone()),
            name,
            original,
            namespace: namespace.cloned(),
            origin,
        })
    }

    /// Register one tool by hand under `namespace`, routed to the service at `service_idx`.
    ///
    /// The tool's name is prefixed as in [`add_service`](Self::add_service); calls to it go to the
    /// service under the tool's own (unprefixed) name.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`] if no service is stored at `service_idx`,
    /// [`PegBoardError::DuplicateTool`] if the name is taken, and the naming errors.
    ///
    /// ```no_run
    /// # async fn demo(service: pegboard::BoxedService) -> Result<(), pegboard::PegBoardError> {
    /// # use std::sync::Arc;
    /// let board = pegboard::PegBoard::new();
    /// let added = board.add_service_with(Some("web".into()), service, Default::default()).await?;
    /// let alias = pegboard::Tool::new("lookup", "Same as search", Arc::new(Default::default()));
    /// board.register_tool(Some("alias"), alias, added.index)?; // "alias-lookup" -> tool "lookup" there
    /// # Ok(()) }
    /// ```
    pub fn register_tool(
        &self,
        namespace: Option<&str>,
        tool: Tool,
        service_idx: usize,
    ) -> Result<(), PegBoardError> {
        let namespace: Option<Arc<str>> = self.inner.naming.namespace(namespace)?.map(Arc::from);
        let pending = self.pending(namespace.as_ref(), tool, Origin::Manual)?;
        let id = ServiceId::new(service_idx);
        self.transaction(|draft| {
            if draft.service(id).is_none() {
                return Err(PegBoardError::UnknownService { index: service_idx });
            }
            if let Some(owner) = draft.owner_of(&pending.name) {
                return Err(PegBoardError::DuplicateTool {
                    name: pending.name.to_string(),
                    namespace: owner,
                });
            }
            let (name, entry) = pending.into_entry(id);
            draft.to_mut().tools.insert(name, entry);
            Ok(())
        })
    }

    /// Remove one tool by its board name. The service stays (other tools may route to it).
    ///
    /// # Errors
    /// [`PegBoardError::ToolNotFound`], with close matches.
    ///
    /// ```
    /// let err = pegboard::PegBoard::new().unregister_tool("web-search").unwrap_err();
    /// assert!(matches!(err, pegboard::PegBoardError::ToolNotFound { .. }));
    /// ```
    pub fn unregister_tool(&self, prefixed_name: &str) -> Result<(), PegBoardError> {
        self.transaction(|draft| {
            if !draft.tools.contains_key(prefixed_name) {
                return Err(super::calls::not_found(draft, prefixed_name));
            }
            let next = draft.to_mut();
            next.tools.shift_remove(prefixed_name);
            // A withdrawn service (its namespace is gone) lives only for such tools.
            let routed = next.routed();
            let (taken, _) =
                next.take_services(|id, slot| slot.is_withdrawn() && !routed.contains(&id));
            for (_, slot) in taken {
                slot.stop_watching();
            }
            Ok(())
        })
    }

    /// Remove a namespace: the tools registered under it, and the services added under it that
    /// no other tool routes to (they shut down once no call is in flight on them). A service
    /// added under it that another namespace's tool still routes to (a hand-registered alias)
    /// stays for that tool, but is no longer listed or re-listed under the removed namespace.
    /// Tools of other namespaces are never removed. Returns the number of tools removed.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownNamespace`], listing the namespaces there are.
    ///
    /// ```
    /// let err = pegboard::PegBoard::new().unregister_namespace("web").unwrap_err();
    /// assert!(matches!(err, pegboard::PegBoardError::UnknownNamespace { .. }));
    /// ```
    pub fn unregister_namespace(&self, namespace: &str) -> Result<usize, PegBoardError> {
        let in_namespace = |slot: &ServiceSlot| slot.namespace.as_deref() == Some(namespace);
        let (removed, taken, kept) = self.transaction(|draft| {
            if !draft.namespaces.contains_key(namespace) {
                return Err(PegBoardError::UnknownNamespace {
                    namespace: namespace.to_string(),
                    known: draft.known_namespaces(),
                });
            }
            let next = draft.to_mut();
            let before = next.tools.len();
            next.tools
                .retain(|_, e| e.namespace.as_deref() != Some(namespace));
            let removed = before - next.tools.len();
            let routed = next.routed();
            // Services of this namespace, and services withdrawn earlier, that nothing routes to
            // any more go; those another namespace still routes to stay, withdrawn.
            let (taken, _) = next.take_services(|id, slot| {
                (in_namespace(slot) || slot.is_withdrawn()) && !routed.contains(&id)
            });
            let kept: Vec<Arc<ServiceSlot>> = next
                .stored()
                .filter(|(_, slot)| in_namespace(slot))
                .map(|(_, slot)| Arc::clone(slot))
                .collect();
            for slot in &kept {
                // Before the reindex that follows: its namespace leaves the board with its tools.
                slot.withdraw();
            }
            Ok((removed, taken, kept))
        })?;
        for (_, slot) in &taken {
            slot.stop_watching();
        }
        for slot in &kept {
            slot.stop_watching();
        }
        Ok(removed)
    }
}

/// Board tools of what a listing kept, each with the extra members its server sent under its
/// name (what a filter did to the typed fields stays).
fn with_extras(
    tools: Vec<rmcp::model::Tool>,
    extras: &mut HashMap<String, Arc<rmcp::model::JsonObject>>,
) -> Vec<Tool> {
    tools
        .into_iter()
        .map(|tool| {
            let extra = extras.remove(tool.name.as_ref());
            let mut tool = Tool::from(tool);
            if extra.is_some() {
                tool.extra = extra;
            }
            tool
        })
        .collect()
}
