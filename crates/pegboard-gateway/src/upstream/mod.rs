//! Layer 2: the gateway's side of each upstream connection. The [`UpstreamClient`] handler it
//! connects with, the [`Hub`] that keeps the connection's calls in flight ([`flights`]) and what
//! it learnt of its server, a stdio server's child process ([`child`]) and express lane
//! ([`lane`]), progress forwarded in wire order ([`tap`]). It reaches the sessions above only
//! through the traits it owns ([`sides`], `hub::OpenPerSession`).

pub(crate) mod backlog;
pub(crate) mod child;
mod client;
pub(crate) mod flights;
pub(crate) mod generation;
mod hub;
pub(crate) mod lane;
pub(crate) mod sides;
mod tap;

pub use client::UpstreamClient;
pub(crate) use client::can_elicit;
pub(crate) use flights::{Flight, OwnedFlightGuard};
pub use hub::Hub;
pub(crate) use hub::{OpenPerSession, PlainTool, SessionConnection};
pub use tap::ProgressTap;
