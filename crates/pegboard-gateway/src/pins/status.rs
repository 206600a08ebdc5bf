//! How an item compares with its pin, and what the gateway does with it.

/// How an item compares with its pin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Its definition is the pinned one.
    Pinned,
    /// Pinned, with another definition.
    Changed,
    /// Not in the lock.
    New,
}

/// What the gateway does with an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Listed, nothing said.
    Keep,
    /// Listed, with a warning.
    Warn,
    /// Off the board.
    Hide,
}
