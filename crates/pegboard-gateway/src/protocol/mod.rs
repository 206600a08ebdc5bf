//! Layer 0: what the gateway's answers are made of — why a call has no result and how a client
//! reads that ([`failure`]), the protocol generations ([`versions`]), the HTTP names the fronts
//! share ([`headers`]), a tool result's shape read without building it ([`result_shape`]). Nothing here does I/O or knows a session.

pub(crate) mod failure;
pub(crate) mod headers;
pub(crate) mod meta;
pub(crate) mod result_shape;
pub(crate) mod versions;
