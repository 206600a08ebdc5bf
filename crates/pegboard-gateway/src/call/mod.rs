//! Layer 3: the one call pipeline. Whatever the front (stdio, HTTP) and the path (rmcp's typed
//! way, `pipeline.rs`, or the express lane's bytes, `crate::express`), a `tools/call` goes
//! through the same steps in the same code:
//!
//! 1. [`route`]: the board name resolved to its server's connection and original name (a
//!    `"session": "per-client"` server: the caller session's own connection);
//! 2. one [`Deadline`](crate::protocol::failure::Deadline) per call, started before anything is
//!    sent;
//! 3. the client's `_meta` carried upstream (`crate::protocol::meta`), progress and the
//!    server's requests during the call sent to the call's own client end (a
//!    [`CallSide`](crate::upstream::sides::CallSide)), progress only when it increases;
//! 4. the call ends by its answer, an explicit cancel, its deadline or the end of its session
//!    (never by a dropped connection); a failure has one wording
//!    ([`Failure::answer`](crate::protocol::failure::Failure::answer));
//! 5. [`result`]: resource URIs in the result namespaced as the board shows them (the lane
//!    passes a plain result, text only and within its cap, as it is:
//!    `crate::protocol::result_shape`).
//!
//! [`send`] is the leaf of the typed way; [`bridge`], [`mrtr`] and [`tasks`] build on it for
//! the cases where client and server speak different protocol generations or a tool needs a
//! task. The lane reuses steps 1, 2, 4 and 5 as they are and keeps only its transport.

pub(crate) mod bridge;
pub(crate) mod caller;
pub(crate) mod hooks;
pub(crate) mod mrtr;
pub(crate) mod parked;
pub(crate) mod pipeline;
pub(crate) mod reads;
pub(crate) mod relayed;
pub(crate) mod result;
pub(crate) mod route;
pub(crate) mod send;
mod tasks;
pub(crate) mod watch;
