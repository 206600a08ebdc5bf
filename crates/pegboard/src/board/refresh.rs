//! Re-listing a service's tools, by hand or on its `tools/list_changed`.

use std::{
    collections::HashSet,
    sync::{Arc, Weak},
    time::Duration,
};

use arcstr::ArcStr;
use indexmap::IndexMap;

use super::{Inner, PegBoard, pending::Pending};
use crate::{
    PegBoardError, RefreshReport,
    client::ToolListWatch,
    discovery,
    registry::{Origin, ServiceId},
};

/// A burst of `list_changed` notifications within this window costs one re-listing.
const REFRESH_DEBOUNCE: Duration = Duration::from_millis(50);
/// After a failed re-listing, the first retry waits this long; each further one twice as long,
/// up to [`RETRY_MAX`]. A new `list_changed` retries at once.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MAX: Duration = Duration::from_secs(30);

impl PegBoard {
    /// Re-list the tools of every service added under `namespace` and swap them in atomically.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownNamespace`], or the first service's listing error.
    pub async fn refresh_namespace(&self, namespace: &str) -> Result<RefreshReport, PegBoardError> {
        let (ids, known): (Vec<ServiceId>, String) = {
            let registry = self.snapshot();
            let ids = registry
                .stored()
                .filter(|(_, s)| !s.is_withdrawn() && s.namespace.as_deref() == Some(namespace))
                .map(|(id, _)| id)
                .collect();
            (ids, registry.known_namespaces())
        };
        if ids.is_empty() {
            return Err(PegBoardError::UnknownNamespace {
                namespace: namespace.to_string(),
                known,
            });
        }
        let mut report = RefreshReport::default();
        for id in ids {
            report.merge(self.refresh_service(id.index()).await?);
        }
        Ok(report)
    }

    /// Re-list the tools of the service at `index` and swap them in atomically: new tools are
    /// appended, gone ones removed, changed ones replaced in place (still routed to the same
    /// service); unchanged tools keep their names and their order. A new tool whose name
    /// clashes with another tool on the board is skipped (and reported).
    ///
    /// Refreshes of one service may overlap: the result of one is dropped (`superseded`) only
    /// when a refresh that started later has already been swapped in. A refresh that fails
    /// changes nothing, so the last good listing stays on the board.
    ///
    /// # Errors
    /// [`PegBoardError::UnknownService`], or the listing's error (the board is then unchanged).
    pub async fn refresh_service(&self, index: usize) -> Result<RefreshReport, PegBoardError> {
        let id = ServiceId::new(index);
        let slot = self
            .snapshot()
            .service(id)
            .cloned()
            .ok_or(PegBoardError::UnknownService { index })?;
        let mut report = RefreshReport::default();
        if slot.is_withdrawn() {
            // Its namespace was removed; it stays only for other namespaces' hand-made routes.
            return Ok(report);
        }
        let ticket = slot.start_refresh();
        let tools = discovery::list_all_tools(
            &slot.peer,
            slot.namespace.as_deref(),
            self.inner.limits,
            slot.options.tool_list_tap.as_ref(),
        )
        .await?;
        let (tools, withheld) =
            self.filtered(slot.namespace.as_ref(), &slot.peer, tools, &slot.options);
        report.withheld = withheld.keys().map(ToString::to_string).collect();
        let mut fresh: IndexMap<ArcStr, Pending> = IndexMap::with_capacity(tools.len());
        for tool in tools {
            match self.pending(slot.namespace.as_ref(), tool, Origin::Discovered) {
                Ok(p) if !fresh.contains_key(&p.name) => {
                    fresh.insert(p.name.clone(), p);
                }
                Ok(p) => report.skipped.push(p.name.to_string()),
                Err(e) => tracing::warn!(index, error = %e, "refresh: skipping a tool"),
            }
        }

        self.transaction(|draft| {
            let still_there = draft.service(id).is_some_and(|s| Arc::ptr_eq(s, &slot));
            if !still_there || !slot.may_commit_refresh(ticket) {
                report.superseded = true;
                return Ok(report);
            }
            slot.committed_refresh(ticket);
            // The slot's own state, not the snapshot's: what is withheld may change while the
            // tools on the board do not, and that is no reason to tell clients the list changed.
            slot.set_withheld(withheld);
            // The diff, read before anything is cloned: an unchanged listing costs no write.
            let ours =
                |e: &crate::registry::Entry| e.service == id && e.origin == Origin::Discovered;
            let gone: HashSet<ArcStr> = draft
                .tools
                .iter()
                .filter(|(name, e)| ours(e) && !fresh.contains_key(*name))
                .map(|(name, _)| name.clone())
                .collect();
            report.removed.extend(
                draft
                    .tools
                    .keys()
                    .filter(|name| gone.contains(*name))
                    .map(ToString::to_string),
            );
            let mut updates = Vec::new();
            for (name, p) in fresh {
                match draft.tools.get(&name) {
                    None => {
                        report.added.push(name.to_string());
                        updates.push(p);
                    }
                    Some(entry) if ours(entry) => {
                        if p.differs_from(entry) {
                            report.changed.push(name.to_string());
                            updates.push(p);
                        }
                    }
                    Some(_) => {
                        tracing::warn!(tool = %name, "refresh: name already taken; tool skipped");
                        report.skipped.push(name.to_string());
                    }
                }
            }
            if report.is_unchanged() {
                return Ok(report);
            }
            let next = draft.to_mut();
            if !gone.is_empty() {
                next.tools.retain(|name, _| !gone.contains(name));
            }
            for p in updates {
                let (name, entry) = p.into_entry(id);
                match next.tools.get_mut(&name) {
                    // A changed tool keeps its place and is routed to this service, as before.
                    Some(place) => *place = entry,
                    None => {
                        next.tools.insert(name, entry);
                    }
                }
            }
            Ok(report)
        })
    }
}

/// Follow one service's `tools/list_changed` until the service or the board goes away. A failed
/// re-listing keeps the board's tools and is retried with backoff.
pub(super) async fn follow_changes(board: Weak<Inner>, id: ServiceId, mut watch: ToolListWatch) {
    let mut retry: Option<Duration> = None;
    loop {
        match retry {
            None => {
                if watch.changes.changed().await.is_err() {
                    return;
                }
            }
            Some(delay) => {
                tokio::select! {
                    changed = watch.changes.changed() => if changed.is_err() { return },
                    () = tokio::time::sleep(delay) => {}
                }
            }
        }
        // Coalesce a burst into one re-listing.
        tokio::time::sleep(REFRESH_DEBOUNCE).await;
        watch.changes.borrow_and_update();
        // Hold the board only while refreshing: a watcher must not keep a dropped board alive.
        let Some(inner) = board.upgrade() else { return };
        let outcome = PegBoard { inner }.refresh_service(id.index()).await;
        match outcome {
            Ok(report) => {
                retry = None;
                tracing::info!(
                    index = id.index(),
                    added = report.added.len(),
                    removed = report.removed.len(),
                    changed = report.changed.len(),
                    withheld = report.withheld.len(),
                    "tools changed on the server; board refreshed"
                );
            }
            Err(PegBoardError::UnknownService { .. } | PegBoardError::ServiceClosed { .. }) => {
                return;
            }
            Err(e) => {
                let delay = retry.map_or(RETRY_FIRST, |d| (d * 2).min(RETRY_MAX));
                tracing::warn!(index = id.index(), error = %e, retry_in = ?delay,
                    "could not refresh tools after list_changed; keeping the last good tools");
                retry = Some(delay);
            }
        }
    }
}
