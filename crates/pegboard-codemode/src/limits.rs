//! [`Limits`]: what one run may use (the config's `codeMode` object).

use serde::Deserialize;

/// What one `run_code` may use. Every limit, when hit, ends the run with its own error
/// ([`crate::RunError`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Limits {
    /// Wall-clock time of the run, in seconds (running code and awaited calls alike).
    pub timeout_secs: u64,
    /// The JavaScript heap, in MiB.
    pub memory_mib: u64,
    /// Tool calls one run may make.
    pub max_calls: usize,
    /// Tool calls in flight at once; more wait their turn.
    pub max_parallel: usize,
    /// The returned value's JSON and the captured log, each, in KiB.
    pub max_output_kib: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout_secs: 30,
            memory_mib: 64,
            max_calls: 100,
            max_parallel: 8,
            max_output_kib: 1024,
        }
    }
}

/// The JavaScript stack a run may use (recursion ends with [`crate::RunError::Stack`] well
/// before the thread's own stack, [`THREAD_STACK`], runs out).
#[cfg(feature = "engine")]
pub(crate) const JS_STACK: usize = 1024 * 1024;
/// The stack of the thread a run executes on.
#[cfg(feature = "engine")]
pub(crate) const THREAD_STACK: usize = 8 * 1024 * 1024;

impl Limits {
    /// Check the values make sense (each at least 1).
    ///
    /// # Errors
    /// A message naming the field that is zero.
    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("timeoutSecs", self.timeout_secs == 0),
            ("memoryMib", self.memory_mib == 0),
            ("maxCalls", self.max_calls == 0),
            ("maxParallel", self.max_parallel == 0),
            ("maxOutputKib", self.max_output_kib == 0),
        ];
        match fields.iter().find(|(_, zero)| *zero) {
            Some((name, _)) => Err(format!("codeMode.{name} must be at least 1")),
            None => Ok(()),
        }
    }

    /// The returned value's and the log's cap, in bytes.
    pub fn output_bytes(&self) -> usize {
        usize::try_from(self.max_output_kib.saturating_mul(1024)).unwrap_or(usize::MAX)
    }

    /// The heap cap, in bytes.
    #[cfg(feature = "engine")]
    pub(crate) fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }
}
