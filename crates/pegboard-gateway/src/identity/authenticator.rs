//! Who is calling: a request's bearer token to one [`Client`].
//!
//! A static token is hashed once and compared with every client's digest in constant time;
//! anything else, when `auth` is configured, is validated as a JWT of the issuer and given to
//! the first client (in file order) whose `jwt` claims it carries. Without `clients`, `auth`
//! and `--token`, every request is the [`DEFAULT_CLIENT`], which sees everything.

use std::sync::Arc;

use super::access::AccessConfig;
use super::claims::ClaimsMatch;
use super::client::{Client, DEFAULT_CLIENT};
use super::errors::{AccessConfigError, AuthError, ClientProblem};
use super::jwt::{JwtVerifier, LEEWAY_SECS};
use super::keys::KeyOptions;
use super::token::{self, TokenDigest};
use super::verified::Verified;
use crate::limits::{SharedLimits, fair_share};

/// What the authenticator needs besides the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthOptions {
    /// The gateway's session cap (`--max-sessions`): clients without `maxSessions` get a fair
    /// share of it.
    pub max_sessions: usize,
    /// How the issuer's keys are fetched and kept.
    pub keys: KeyOptions,
}

impl Default for AuthOptions {
    fn default() -> Self {
        Self {
            max_sessions: 1000,
            keys: KeyOptions::default(),
        }
    }
}

/// Maps credentials to clients. Built once at start (and again on a config reload).
pub struct Authenticator {
    clients: Vec<Arc<Client>>,
    /// Static token digests, and the index in `clients` of each one's client.
    digests: Vec<TokenDigest>,
    digest_owner: Vec<usize>,
    /// JWT clients in file order: their claims and index in `clients`.
    claims: Vec<(ClaimsMatch, usize)>,
    jwt: Option<JwtVerifier>,
    /// JWTs validated before: a client's next requests skip the signature check.
    verified: Verified,
    /// Set when nothing is configured: every request is this client.
    open: Option<Arc<Client>>,
}

impl Authenticator {
    /// The authenticator for `access` (the config's `clients` and `auth`) and `token`
    /// (`--token`: one more client, [`DEFAULT_CLIENT`], with full access).
    ///
    /// # Errors
    /// An empty `token`, a token equal to a client's, or a client named `default` beside
    /// `token`; the HTTP client for the issuer cannot be built.
    pub fn new(
        access: Option<&AccessConfig>,
        token: Option<&str>,
        options: AuthOptions,
    ) -> Result<Self, AccessConfigError> {
        Self::counted_in(access, token, options, None)
    }

    /// [`Authenticator::new`] with the clients' limits counted in `shared` (the store, for the
    /// whole fleet) when given.
    ///
    /// # Errors
    /// As [`Authenticator::new`].
    pub(crate) fn counted_in(
        access: Option<&AccessConfig>,
        token: Option<&str>,
        options: AuthOptions,
        shared: Option<&Arc<dyn SharedLimits>>,
    ) -> Result<Self, AccessConfigError> {
        let configured = access.map_or(0, |a| a.clients.len());
        let total = configured + usize::from(token.is_some());
        let share = fair_share(options.max_sessions, total);
        let mut this = Self {
            clients: Vec::with_capacity(total),
            digests: Vec::new(),
            digest_owner: Vec::new(),
            claims: Vec::new(),
            jwt: None,
            verified: Verified::default(),
            open: None,
        };
        if access.is_none() && token.is_none() {
            this.open = Some(Arc::new(Client::unrestricted(
                DEFAULT_CLIENT,
                options.max_sessions,
            )));
            return Ok(this);
        }
        for c in access.map(|a| a.clients.as_slice()).unwrap_or_default() {
            if token.is_some() && &*c.name == DEFAULT_CLIENT {
                return Err(AccessConfigError::Client {
                    client: c.name.to_string(),
                    problem: ClientProblem::ReservedName,
                });
            }
            let index = this.clients.len();
            let client = Client::new(
                Arc::clone(&c.name),
                c.tools.clone(),
                c.resources,
                &c.limits,
                share,
            );
            this.clients.push(Arc::new(match shared {
                Some(shared) => client.counted_in(shared),
                None => client,
            }));
            if let Some(digest) = c.token {
                this.digests.push(digest);
                this.digest_owner.push(index);
            }
            if let Some(claims) = &c.jwt {
                this.claims.push((claims.clone(), index));
            }
        }
        if let Some(token) = token {
            if token.trim().is_empty() {
                return Err(AccessConfigError::Client {
                    client: DEFAULT_CLIENT.into(),
                    problem: ClientProblem::EmptyToken(false),
                });
            }
            let digest = TokenDigest::of(token);
            if let Some(i) = token::find(&digest, &this.digests) {
                return Err(AccessConfigError::SameToken {
                    first: this.clients[this.digest_owner[i]].name().to_string(),
                    second: format!("{DEFAULT_CLIENT} (--token)"),
                });
            }
            this.digests.push(digest);
            this.digest_owner.push(this.clients.len());
            this.clients
                .push(Arc::new(Client::unrestricted(DEFAULT_CLIENT, share)));
        }
        if let Some(auth) = access.and_then(|a| a.auth.as_ref()) {
            let http = crate::io::http_client::client().map_err(|e| {
                AccessConfigError::Auth(format!("cannot build the HTTP client for the issuer: {e}"))
            })?;
            this.jwt = Some(JwtVerifier::new(
                &auth.issuer,
                &auth.audience,
                http,
                options.keys,
            ));
        }
        Ok(this)
    }

    /// Whether requests must carry credentials (`clients`, `auth` or `--token` configured).
    #[cfg(any(test, feature = "testing"))]
    pub fn requires_credentials(&self) -> bool {
        self.open.is_none()
    }

    /// Whether JWTs of an issuer are accepted (`auth` configured).
    #[cfg(any(test, feature = "testing"))]
    pub fn accepts_jwt(&self) -> bool {
        self.jwt.is_some()
    }

    /// Every client, in file order (`--token`'s last); for an open gateway, the one default.
    pub fn clients(&self) -> &[Arc<Client>] {
        match &self.open {
            Some(open) => std::slice::from_ref(open),
            None => &self.clients,
        }
    }

    /// The client named `name` (for `pegboard serve --client NAME`).
    pub fn client(&self, name: &str) -> Option<Arc<Client>> {
        self.clients().iter().find(|c| c.name() == name).cloned()
    }

    /// The client for stdio: `name`'s view, or (no name) one that sees everything.
    ///
    /// # Errors
    /// No client has that name; the message lists those there are.
    pub fn stdio_client(&self, name: Option<&str>) -> Result<Arc<Client>, String> {
        match name {
            None => Ok(self
                .open
                .clone()
                .unwrap_or_else(|| Arc::new(Client::unrestricted(DEFAULT_CLIENT, usize::MAX)))),
            Some(name) => self.client(name).ok_or_else(|| {
                let known: Vec<String> = self
                    .clients()
                    .iter()
                    .map(|c| format!("`{}`", c.name()))
                    .collect();
                format!(
                    "no client `{name}` in the config's `clients`; there are: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )
            }),
        }
    }

    /// The client a request's `Authorization` header value stands for.
    ///
    /// # Errors
    /// An [`AuthError`]: missing or malformed credentials, a token no client holds, a JWT that
    /// fails validation or whose claims match no client, or the issuer's keys unavailable.
    pub async fn authenticate(
        &self,
        authorization: Option<&str>,
    ) -> Result<Arc<Client>, AuthError> {
        if let Some(open) = &self.open {
            return Ok(Arc::clone(open));
        }
        let token = bearer(authorization)?;
        let digest = TokenDigest::of(token);
        if let Some(i) = token::find(&digest, &self.digests) {
            return Ok(Arc::clone(&self.clients[self.digest_owner[i]]));
        }
        let Some(jwt) = &self.jwt else {
            return Err(AuthError::UnknownToken);
        };
        if token.split('.').count() != 3 {
            return Err(AuthError::UnknownToken);
        }
        if let Some(i) = self.verified.get(digest.bytes()) {
            return Ok(Arc::clone(&self.clients[i]));
        }
        let claims = jwt.verify(token).await?;
        let (_, i) = self
            .claims
            .iter()
            .find(|(m, _)| m.matches(&claims))
            .ok_or(AuthError::NoMatchingClient)?;
        // Validation required `exp`; remembered until then (with the same leeway).
        if let Some(exp) = claims.get("exp").and_then(serde_json::Value::as_u64) {
            self.verified
                .insert(*digest.bytes(), *i, exp.saturating_add(LEEWAY_SECS));
        }
        Ok(Arc::clone(&self.clients[*i]))
    }

    /// The union of the `scope` values the JWT clients ask for (for `WWW-Authenticate` and
    /// the protected-resource metadata), in file order, each once.
    pub fn scopes(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (m, _) in &self.claims {
            for s in m.scope().into_iter().flat_map(str::split_whitespace) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }

    /// Key sets fetched from the issuer so far (0 without `auth`).
    #[cfg(any(test, feature = "testing"))]
    pub fn key_fetches(&self) -> u64 {
        self.jwt.as_ref().map_or(0, JwtVerifier::fetches)
    }
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field(
                "clients",
                &self.clients().iter().map(|c| c.name()).collect::<Vec<_>>(),
            )
            .field("jwt", &self.jwt.is_some())
            .finish_non_exhaustive()
    }
}

/// The token of `Bearer <token>` (the scheme in any case, RFC 6750 §2.1).
fn bearer(authorization: Option<&str>) -> Result<&str, AuthError> {
    let value = authorization.ok_or(AuthError::Missing)?;
    let (scheme, token) = value.trim().split_once(' ').ok_or(AuthError::Malformed)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(AuthError::Malformed);
    }
    Ok(token)
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn new() {
        use crate::identity::{AuthOptions, Authenticator};
        let open = Authenticator::new(None, None, AuthOptions::default()).unwrap();
        assert!(!open.requires_credentials());
        let token = Authenticator::new(
            None,
            Some("a-long-random-token-value"),
            AuthOptions::default(),
        )
        .unwrap();
        assert!(token.requires_credentials());
        assert_eq!(token.client("default").unwrap().name(), "default");
    }
}
