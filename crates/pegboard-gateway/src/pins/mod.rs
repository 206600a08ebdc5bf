//! Pins: tool and prompt definitions fixed in `pegboard.lock` and compared at every listing.
//!
//! A tool's description is an instruction to the model. A server that changes it after it was
//! reviewed (a "rug pull") steers the agent without anyone seeing. `pegboard pin` writes the
//! SHA-256 of each definition the model sees (and the definition, for `--diff`) to
//! `pegboard.lock` beside the config; from then on, each listing of a server (start,
//! `tools/list_changed`, restart, reload, and every `prompts/list`) is compared with it:
//!
//! - a changed tool or prompt is hidden (`"onChange": "hide"`, the default) or listed with a
//!   warning (`"warn"`); a new one is listed (`"onNew": "allow"`, the default) or hidden (`"hide"`);
//! - a hidden tool is off the board (one `list_changed` for the listing, as any change), and its
//!   call is answered "tool `X` changed since it was pinned; review with `pegboard pin --diff` and
//!   accept with `pegboard pin --accept X`" ([`pegboard::PegBoard::withheld`] looks it up);
//! - warnings and hides are logged and counted once each ([`counters()`]).
//!
//! The hook is the board's [`pegboard::ListingFilter`], set by [`crate::connect::register`] on
//! every server from its entry's [`Guards`] ([`PinFilter`]): every way a server is listed goes
//! through it. `onChange` / `onNew` are set per server entry or for the whole config file, see
//! [`crate::config`]. The lock is read with the config; after `pegboard pin --accept`, a reload
//! (SIGHUP) restarts the servers whose pins changed, which lists them again.
//!
//! | file | what it holds |
//! |---|---|
//! | `canonical.rs` | the definition the model sees, its canonical JSON and SHA-256 |
//! | `lock.rs` | the lock file: data, reading (checked), writing (whole or not at all) |
//! | `policy.rs`, `status.rs` | `onChange`, `onNew`, what to do with an item ([`Guards`]) |
//! | `filter.rs` | [`PinFilter`], the listing hook |
//! | `report.rs` | what the last listings of a server found, news logged once |
//! | `diff.rs`, `accept.rs` | `pegboard pin --diff` and `--accept` |
//! | `counters.rs` | warned, hidden, scan findings, capped results |

pub mod accept;
pub(crate) mod canonical;
pub(crate) mod counters;
pub mod diff;
pub mod filter;
pub mod lock;
pub mod policy;
pub(crate) mod report;
pub(crate) mod status;

pub use counters::{CounterValues, counters};
pub use filter::PinFilter;
pub use lock::{Kind, LOCK_FILE, Lock, LockError};
pub use policy::{Guards, OnChange, OnNew};
pub use report::Report;
