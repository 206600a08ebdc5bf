//! Code mode's settings: `--code-mode` and the config key `codeMode`.

use serde_json::Value;

pub use pegboard_codemode::Limits as CodeLimits;

/// Code mode's settings.
///
/// In the config file, `codeMode` is `true` (on, default limits), `false` (off), or an object
/// of limits and `keepTools`: `{"timeoutSecs": 30, "memoryMib": 64, "maxCalls": 100,
/// "maxParallel": 8, "maxOutputKib": 1024, "keepTools": false}`; either form turns it on.
///
/// ```
/// use pegboard_gateway::config::CodeModeSettings;
/// let on = CodeModeSettings::from_json(&serde_json::json!({"maxCalls": 5, "keepTools": true})).unwrap();
/// let on = on.unwrap();
/// assert_eq!((on.limits.max_calls, on.limits.timeout_secs, on.keep_tools), (5, 30, true));
/// assert!(CodeModeSettings::from_json(&serde_json::json!(false)).unwrap().is_none());
/// assert!(CodeModeSettings::from_json(&serde_json::json!({"maxCalls": 0})).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeModeSettings {
    /// What one run may use.
    pub limits: CodeLimits,
    /// List the board's tools beside the three code-mode tools.
    pub keep_tools: bool,
}

impl CodeModeSettings {
    /// Read the config file's `codeMode` value: `None` when it says off.
    ///
    /// # Errors
    /// A message naming the bad field.
    pub fn from_json(value: &Value) -> Result<Option<Self>, String> {
        match value {
            Value::Bool(false) => Ok(None),
            Value::Bool(true) => Ok(Some(Self::default())),
            Value::Object(fields) => {
                let mut fields = fields.clone();
                let keep_tools = match fields.remove("keepTools") {
                    None => false,
                    Some(Value::Bool(keep)) => keep,
                    Some(_) => return Err("`codeMode.keepTools` must be true or false".to_string()),
                };
                let limits: CodeLimits = serde_json::from_value(Value::Object(fields)).map_err(|e| {
                    format!(
                        "`codeMode`: {e}; its fields are timeoutSecs, memoryMib, maxCalls, maxParallel, maxOutputKib (whole numbers) and keepTools"
                    )
                })?;
                limits.validate()?;
                Ok(Some(Self { limits, keep_tools }))
            }
            _ => Err("`codeMode` must be true, false or an object of limits".to_string()),
        }
    }
}
