//! `${VAR}` expansion in config values.

use super::VariableProblem;

/// The prefix of a reference to a stored secret: `${secret:ENTRY.VAR}`.
pub const SECRET_PREFIX: &str = "secret:";

/// Expand `${VAR}` and `${VAR:-fallback}`; `$${` is a literal `${`; any other `$` is kept as is.
/// `${secret:NAME}` asks `lookup` for `secret:NAME` (a value of the credential store).
///
/// # Errors
/// A [`VariableProblem`]: an unset variable, an editor variable, an unclosed `${`.
pub fn expand(
    input: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, VariableProblem> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(escaped) = after.strip_prefix("${") {
            out.push_str("${");
            rest = escaped;
        } else if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(VariableProblem::Unclosed(input.to_string()));
            };
            let inner = &body[..end];
            let (var, fallback) = match inner.split_once(":-") {
                Some((v, f)) => (v, Some(f)),
                None => (inner, None),
            };
            // `${secret:NAME}` or `${VAR}`: looked up and defaulted alike.
            let secret = var.strip_prefix(SECRET_PREFIX);
            match secret {
                Some(name) if !crate::credentials::is_secret_name(name) => {
                    return Err(VariableProblem::NotAName(inner.to_string()));
                }
                Some(_) => {}
                None if var.is_empty()
                    || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    if var.contains(':') {
                        return Err(VariableProblem::Editor(inner.to_string()));
                    }
                    return Err(VariableProblem::NotAName(inner.to_string()));
                }
                None => {}
            }
            match (
                lookup(var).filter(|v| fallback.is_none() || !v.is_empty()),
                fallback,
            ) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(f)) => out.push_str(f),
                (None, None) => {
                    return Err(match secret {
                        Some(name) => VariableProblem::Secret(name.to_string()),
                        None => VariableProblem::Unset(var.to_string()),
                    });
                }
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}
