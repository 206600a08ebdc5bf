//! Layer 0: what the gateway's answers are made of — why a call has no result and how a client
//! reads that ([`failure`]), the protocol generations ([`versions`]), the HTTP names the fronts
//! share ([`headers`]). Nothing here does I/O or knows a session.

pub(crate) mod failure;
pub(crate) mod headers;
pub(crate) mod meta;
pub(crate) mod versions;
