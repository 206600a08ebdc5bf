//! Validating a bearer JWT: algorithm on the allowlist, a key of the issuer's set, signature,
//! `iss`, `aud`, `exp` and `nbf` (60 s leeway), all by `jsonwebtoken`.

use std::collections::HashMap;
use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::errors::AuthError;
use super::keys::{ALLOWED, KeyCache, KeyError, KeyOptions};

/// Clock skew tolerated on `exp` and `nbf`, in seconds.
pub(crate) const LEEWAY_SECS: u64 = 60;

/// The validator of one issuer's tokens for one audience.
pub(crate) struct JwtVerifier {
    keys: Arc<KeyCache>,
    /// One prepared validation per allowed algorithm (`jsonwebtoken` wants the key's family).
    validations: HashMap<Algorithm, Validation>,
}

impl JwtVerifier {
    pub(crate) fn new(
        issuer: &str,
        audience: &str,
        http: reqwest::Client,
        options: KeyOptions,
    ) -> Self {
        let validations = ALLOWED
            .iter()
            .map(|alg| {
                let mut v = Validation::new(*alg);
                v.set_issuer(&[issuer]);
                v.set_audience(&[audience]);
                v.set_required_spec_claims(&["exp", "iss", "aud"]);
                v.leeway = LEEWAY_SECS;
                v.validate_exp = true;
                v.validate_nbf = true;
                (*alg, v)
            })
            .collect();
        Self {
            keys: KeyCache::new(issuer.to_string(), http, options),
            validations,
        }
    }

    /// Key sets fetched so far.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn fetches(&self) -> u64 {
        self.keys.fetches()
    }

    /// The claims of `token` once it is valid.
    pub(crate) async fn verify(&self, token: &str) -> Result<Map<String, Value>, AuthError> {
        let refused = |why: String| AuthError::InvalidJwt(why);
        // `alg: none` (and any name not a signature algorithm) fails here: it has no variant.
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| refused(format!("unreadable header ({})", describe(e.kind()))))?;
        let Some(validation) = self.validations.get(&header.alg) else {
            return Err(refused(format!(
                "signed with {:?}, which this gateway does not accept (asymmetric algorithms only)",
                header.alg
            )));
        };
        let key = self
            .keys
            .key(header.kid.as_deref(), header.alg)
            .await
            .map_err(|e| match e {
                KeyError::Unknown => refused(match &header.kid {
                    Some(kid) => format!(
                        "signed with key `{}`, which the issuer does not publish",
                        safe(kid)
                    ),
                    None => "it names no key (`kid`) and the issuer has several".into(),
                }),
                KeyError::Unavailable(why) => AuthError::KeysUnavailable(why),
            })?;
        jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, validation)
            .map(|data| data.claims)
            .map_err(|e| refused(describe(e.kind())))
    }
}

/// A `kid` as shown in a message: printable ASCII, at most 64 characters.
fn safe(kid: &str) -> String {
    kid.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect()
}

/// What a validation failure means, in words for the client.
fn describe(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "it has expired".into(),
        ErrorKind::ImmatureSignature => "it is not valid yet (`nbf`)".into(),
        ErrorKind::InvalidAudience => "it is not meant for this gateway (`aud`)".into(),
        ErrorKind::InvalidIssuer => "it is not from the configured issuer (`iss`)".into(),
        ErrorKind::InvalidSignature => "its signature does not verify".into(),
        ErrorKind::InvalidAlgorithm => "its algorithm does not fit the key".into(),
        ErrorKind::MissingRequiredClaim(c) => format!("it has no `{c}` claim"),
        ErrorKind::InvalidClaimFormat(c) => format!("its `{c}` claim is malformed"),
        ErrorKind::InvalidToken => "it is not a JWT".into(),
        ErrorKind::Json(_) | ErrorKind::Base64(_) | ErrorKind::Utf8(_) => "it is malformed".into(),
        other => format!("{other:?}"),
    }
}
