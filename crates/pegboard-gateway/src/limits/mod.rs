//! Per-client limits: calls in progress ([`Concurrency`], `maxConcurrent`), calls per minute
//! ([`CallRate`], `callsPerMinute`) and HTTP sessions ([`SessionBook`], `maxSessions`). Pure
//! data structures: the pipeline takes a [`CallPermit`] per call, the HTTP front reserves a
//! session per `initialize`; each refusal is a [`LimitError`] naming the client and the limit.

mod concurrency;
mod errors;
mod rate;
mod sessions;
mod settings;
#[cfg(test)]
mod tests;

pub use concurrency::{CallPermit, Concurrency};
pub use errors::LimitError;
pub use rate::CallRate;
pub use sessions::{Activity, Reservation, SessionActivity, SessionBook};
pub use settings::{LimitSettings, fair_share};
