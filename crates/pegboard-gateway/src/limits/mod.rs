//! Per-client limits: calls in progress ([`Concurrency`], `maxConcurrent`), calls per minute
//! ([`CallRate`], `callsPerMinute`) and HTTP sessions ([`SessionBook`], `maxSessions`). Pure
//! data structures: the pipeline takes a [`CallPermit`] per call, the HTTP front reserves a
//! session per `initialize`; each refusal is a [`LimitError`] naming the client and the limit.
//! With a store (`--store`, the cargo feature `store`), a client's limits are counted there
//! for the whole fleet instead (`shared.rs`, `fleet/`).

mod concurrency;
mod errors;
#[cfg(feature = "store")]
mod fleet;
mod rate;
mod sessions;
mod settings;
mod shared;
#[cfg(test)]
mod tests;

pub use concurrency::{CallPermit, Concurrency};
pub use errors::LimitError;
#[cfg(feature = "store")]
pub(crate) use fleet::FleetLimits;
pub use rate::CallRate;
pub(crate) use sessions::EvictedSession;
pub use sessions::{Activity, Reservation, SessionActivity, SessionBook};
pub use settings::{LimitSettings, fair_share};
pub(crate) use shared::{CallLimits, PreAdmitted, SharedLimits, SharedPermit};
