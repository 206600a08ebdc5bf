//! What to do with a tool or prompt that differs from its pin: the config's `onChange` and
//! `onNew`, per server entry or for the whole file, and the guards a server entry carries.

use std::str::FromStr;
use std::sync::Arc;

use super::lock::ServerPins;
use super::report::Report;
pub use super::status::{Action, Status};

/// `"onChange"`: a pinned tool or prompt whose definition changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnChange {
    /// Listed as the server now sends it; a warning is logged and counted.
    Warn,
    /// Off the board until accepted (the default when a lock exists); its call is answered with
    /// what to do.
    #[default]
    Hide,
}

/// `"onNew"`: a tool or prompt the lock does not know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnNew {
    /// Listed (the default).
    #[default]
    Allow,
    /// Off the board until accepted.
    Hide,
}

impl FromStr for OnChange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "warn" => Ok(Self::Warn),
            "hide" => Ok(Self::Hide),
            other => Err(format!(
                "`onChange` must be \"warn\" (list it, log a warning) or \"hide\" (keep it off the board until accepted); got `{other}`"
            )),
        }
    }
}

impl FromStr for OnNew {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "allow" => Ok(Self::Allow),
            "hide" => Ok(Self::Hide),
            other => Err(format!(
                "`onNew` must be \"allow\" (list tools the lock does not know) or \"hide\" (keep them off the board until accepted); got `{other}`"
            )),
        }
    }
}

/// The guards of one server entry: its pins and what to do when a listing differs from them, the
/// description scan's stripping, and its result cap. Built by the config loader.
#[derive(Clone, Debug, PartialEq)]
pub struct Guards {
    /// `onChange` (entry, else file, else `hide`).
    pub on_change: OnChange,
    /// `onNew` (entry, else file, else `allow`).
    pub on_new: OnNew,
    /// `stripInvisible` (entry, else file, else `true`): invisible and bidirectional-control
    /// characters are taken out of what the gateway lists (and reported).
    pub strip_invisible: bool,
    /// `maxResultTokens` (entry, else file, else `--max-result-tokens`, else none): see
    /// `crate::guards::caps`.
    pub max_result_tokens: Option<usize>,
    /// This entry's section of the lock; `None` when there is no lock file (then nothing is
    /// compared). A lock without a section for the entry pins nothing of it: all is new.
    pub pins: Option<Arc<ServerPins>>,
    /// What the last listings found (shared by every clone; never part of equality).
    pub report: Report,
}

impl Default for Guards {
    fn default() -> Self {
        Self {
            on_change: OnChange::default(),
            on_new: OnNew::default(),
            strip_invisible: true,
            max_result_tokens: None,
            pins: None,
            report: Report::default(),
        }
    }
}

impl Guards {
    /// What to do with an item of this status.
    pub fn action(&self, status: Status) -> Action {
        match status {
            Status::Pinned => Action::Keep,
            Status::Changed => match self.on_change {
                OnChange::Warn => Action::Warn,
                OnChange::Hide => Action::Hide,
            },
            Status::New => match self.on_new {
                OnNew::Allow => Action::Keep,
                OnNew::Hide => Action::Hide,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_hide_changes_and_allow_new_items() {
        let guards = Guards::default();
        assert_eq!(guards.action(Status::Pinned), Action::Keep);
        assert_eq!(guards.action(Status::Changed), Action::Hide);
        assert_eq!(guards.action(Status::New), Action::Keep);
        let strict = Guards {
            on_change: OnChange::Warn,
            on_new: OnNew::Hide,
            ..Guards::default()
        };
        assert_eq!(strict.action(Status::Changed), Action::Warn);
        assert_eq!(strict.action(Status::New), Action::Hide);
    }

    #[test]
    fn values_parse_or_say_what_is_allowed() {
        assert_eq!("warn".parse::<OnChange>(), Ok(OnChange::Warn));
        assert_eq!("hide".parse::<OnNew>(), Ok(OnNew::Hide));
        assert!("Hide".parse::<OnChange>().unwrap_err().contains("\"warn\""));
        assert!("deny".parse::<OnNew>().unwrap_err().contains("\"allow\""));
    }
}
