//! [`Pending`]: a tool named and checked for the board, before the service it routes to is
//! stored (a new service's tools, or a re-listing's).

use std::sync::Arc;

use arcstr::ArcStr;

use crate::{
    Tool,
    registry::{Entry, Origin, ServiceId},
};

/// A tool and its board name, checked, not yet routed: it becomes an [`Entry`] only once the
/// service it routes to is known, so no entry ever carries a placeholder service.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) name: ArcStr,
    pub(super) tool: Tool,
    pub(super) original: ArcStr,
    pub(super) namespace: Option<Arc<str>>,
    pub(super) origin: Origin,
}

impl Pending {
    pub(super) fn into_entry(self, service: ServiceId) -> (ArcStr, Entry) {
        let entry = Entry {
            tool: self.tool,
            service,
            original: self.original,
            namespace: self.namespace,
            origin: self.origin,
        };
        (self.name, entry)
    }

    /// Whether the tool differs from what `entry` holds (its definition, not its route).
    pub(super) fn differs_from(&self, entry: &Entry) -> bool {
        self.tool != entry.tool
    }
}
