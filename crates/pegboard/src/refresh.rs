//! [`RefreshReport`]: what a re-listing of a service changed on the board.

/// What [`PegBoard::refresh_service`](crate::PegBoard::refresh_service) changed, by board name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefreshReport {
    /// Tools that are new on the board.
    pub added: Vec<String>,
    /// Tools the server no longer offers, now gone from the board.
    pub removed: Vec<String>,
    /// Tools whose description, schema or other details changed, members rmcp does not model
    /// (`execution`, ...) included (name and position kept).
    pub changed: Vec<String>,
    /// New tools left out because their name was taken.
    pub skipped: Vec<String>,
    /// Tools the service's [`ListingFilter`](crate::ListingFilter) withheld at this listing.
    pub withheld: Vec<String>,
    /// A newer refresh of the same service overtook this one, so this result was dropped.
    pub superseded: bool,
}

impl RefreshReport {
    /// Whether the board stayed as it was.
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    pub(crate) fn merge(&mut self, other: RefreshReport) {
        self.added.extend(other.added);
        self.removed.extend(other.removed);
        self.changed.extend(other.changed);
        self.skipped.extend(other.skipped);
        self.withheld.extend(other.withheld);
        self.superseded |= other.superseded;
    }
}
