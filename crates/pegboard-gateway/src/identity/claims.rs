//! A client's `jwt` object: the claims a validated token must carry to be this client.
//!
//! `scope` matches when the token's scope list (space-separated, or an array) contains every
//! word of the value; any other claim matches when it equals the value, or, when the token's
//! claim is an array, contains it. All claims listed must match.

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// The claims of one client's `jwt` object, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimsMatch {
    claims: Vec<(String, Value)>,
}

impl ClaimsMatch {
    /// Check and keep `claims` (values: strings, numbers or booleans).
    ///
    /// # Errors
    /// A value that is an object, an array or null, or a `scope` that is not a non-empty string.
    pub fn new(claims: IndexMap<String, Value>) -> Result<Self, String> {
        for (name, value) in &claims {
            if name == "scope" {
                match value.as_str() {
                    Some(s) if s.split_whitespace().next().is_some() => continue,
                    Some(_) => {
                        return Err("`scope` is empty; name the scope the token must carry".into());
                    }
                    None => {
                        return Err(
                            "`scope` must be a string of space-separated scopes, all of \
                                    which the token must carry"
                                .into(),
                        );
                    }
                }
            }
            match value {
                Value::String(_) | Value::Number(_) | Value::Bool(_) => {}
                Value::Array(_) => {
                    return Err(format!(
                        "claim `{name}` is a list; give one value (a string, number or boolean) and \
                         write one client per value to accept several"
                    ));
                }
                _ => {
                    return Err(format!(
                        "claim `{name}` must be a string, a number or a boolean"
                    ));
                }
            }
        }
        Ok(Self {
            claims: claims.into_iter().collect(),
        })
    }

    /// Whether `token` (a validated token's claims) carries every claim.
    pub fn matches(&self, token: &Map<String, Value>) -> bool {
        self.claims.iter().all(|(name, want)| {
            let Some(have) = token.get(name) else {
                return false;
            };
            if name == "scope" {
                return scope_contains(have, want);
            }
            match have {
                Value::Array(items) => items.contains(want),
                other => other == want,
            }
        })
    }

    /// The `scope` value asked for, if any: for `WWW-Authenticate: ... scope="..."`.
    pub fn scope(&self) -> Option<&str> {
        self.claims
            .iter()
            .find(|(n, _)| n == "scope")
            .and_then(|(_, v)| v.as_str())
    }

    /// Whether no claim is required (every token of the issuer for the audience matches).
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty()
    }
}

fn scope_contains(have: &Value, want: &Value) -> bool {
    let Some(want) = want.as_str() else {
        return false;
    };
    want.split_whitespace().all(|w| match have {
        Value::String(list) => list.split_whitespace().any(|s| s == w),
        Value::Array(items) => items.iter().any(|i| i.as_str() == Some(w)),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn m(v: Value) -> ClaimsMatch {
        ClaimsMatch::new(serde_json::from_value(v).unwrap()).unwrap()
    }

    fn tok(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn scope_matches_a_word_of_the_list_not_a_substring() {
        let readers = m(json!({"scope": "mcp:read"}));
        assert!(readers.matches(&tok(json!({"scope": "openid mcp:read"}))));
        assert!(readers.matches(&tok(json!({"scope": ["mcp:read"]}))));
        assert!(!readers.matches(&tok(json!({"scope": "mcp:readwrite"}))));
        assert!(!readers.matches(&tok(json!({"scope": "mcp:write"}))));
        assert!(!readers.matches(&tok(json!({"sub": "x"}))));
    }

    #[test]
    fn a_scope_of_several_words_needs_them_all() {
        let both = m(json!({"scope": "mcp:read mcp:write"}));
        assert!(both.matches(&tok(json!({"scope": "mcp:write x mcp:read"}))));
        assert!(!both.matches(&tok(json!({"scope": "mcp:read"}))));
    }

    #[test]
    fn other_claims_match_by_equality_or_array_membership() {
        let alice = m(json!({"sub": "alice@example.com"}));
        assert!(alice.matches(&tok(json!({"sub": "alice@example.com"}))));
        assert!(!alice.matches(&tok(json!({"sub": "alice@example.com.evil"}))));
        let admins = m(json!({"groups": "admins", "email_verified": true}));
        assert!(admins.matches(&tok(
            json!({"groups": ["ops", "admins"], "email_verified": true})
        )));
        assert!(!admins.matches(&tok(json!({"groups": ["ops"], "email_verified": true}))));
        assert!(!admins.matches(&tok(json!({"groups": "admins", "email_verified": "true"}))));
    }

    #[test]
    fn every_listed_claim_must_match() {
        let both = m(json!({"sub": "bot", "scope": "mcp:read"}));
        assert!(both.matches(&tok(json!({"sub": "bot", "scope": "mcp:read"}))));
        assert!(!both.matches(&tok(json!({"sub": "bot", "scope": "x"}))));
    }

    #[test]
    fn bad_claim_values_are_refused_with_a_reason() {
        let cases = [
            (json!({"groups": ["a", "b"]}), "is a list"),
            (json!({"sub": null}), "string, a number or a boolean"),
            (json!({"sub": {"a": 1}}), "string, a number or a boolean"),
            (json!({"scope": ""}), "`scope` is empty"),
            (json!({"scope": 3}), "space-separated"),
        ];
        for (v, want) in cases {
            let e = ClaimsMatch::new(serde_json::from_value(v).unwrap()).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn new() {
        use crate::identity::claims::ClaimsMatch;
        let readers = ClaimsMatch::new(
            [("scope".to_string(), serde_json::json!("mcp:read"))]
                .into_iter()
                .collect(),
        )
        .unwrap();
        let token = serde_json::json!({"sub": "bot", "scope": "openid mcp:read"});
        assert!(readers.matches(token.as_object().unwrap()));
    }
}
