//! Layer 4: the downstream sessions. Each client's session state ([`downstream`]: log level,
//! roots, what it was offered, its own per-client connections ([`connections`])), the relay that
//! reaches them all ([`relay`]) with their resource subscriptions ([`subscriptions`]), what each
//! was last answered of its lists ([`lists`]), the HTTP sessions the express lane may serve by id
//! ([`http_sessions`]), and what a session's first requests wait for while servers start
//! ([`startup`]).

mod connections;
pub(crate) mod downstream;
pub(crate) mod http_sessions;
pub(crate) mod lists;
pub(crate) mod relay;
pub mod startup;
pub(crate) mod subscriptions;
