//! What can be wrong: with the `clients` / `auth` config ([`AccessConfigError`], at start), or
//! with a request's credentials ([`AuthError`], per request). No message ever holds a token.

use crate::policy::PatternError;

/// A `clients` or `auth` section that cannot be used: the gateway does not start (access
/// control that is not what was written must not serve).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AccessConfigError {
    /// One client's entry.
    #[error("client `{client}`: {problem}")]
    Client {
        /// The client's name.
        client: String,
        /// What is wrong.
        problem: ClientProblem,
    },
    /// Two clients (or a client and `--token`) with the same token.
    #[error(
        "clients `{first}` and `{second}` hold the same token, so a request with it cannot tell \
         them apart; give each client its own token"
    )]
    SameToken {
        /// The first, in file order.
        first: String,
        /// The second.
        second: String,
    },
    /// The `auth` section.
    #[error("`auth`: {0}")]
    Auth(String),
    /// The sections' shape (`clients` not an object, a client written twice...).
    #[error("{0}")]
    Shape(String),
}

/// What is wrong with one client's entry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientProblem {
    /// Neither `token`, `tokenSha256` nor `jwt`.
    #[error(
        "no credential: give it a `token` (written as \"${{VAR}}\"), a `tokenSha256` or a `jwt` \
         object of claims"
    )]
    NoCredential,
    /// `token` empty (or only whitespace) once expanded.
    #[error("`token` is empty{}; set a real token", if *.0 { " (its variable is set to nothing)" } else { "" })]
    EmptyToken(bool),
    /// `token` with leading or trailing whitespace (a pasted newline).
    #[error("`token` starts or ends with whitespace (a pasted newline?); remove it")]
    TokenWhitespace,
    /// Both `token` and `tokenSha256`.
    #[error("has both `token` and `tokenSha256`; keep one")]
    BothTokens,
    /// `tokenSha256` is not 64 hex digits.
    #[error("`tokenSha256` {0}")]
    MalformedHash(String),
    /// A `${VAR}` in `token` that cannot be filled.
    #[error("in `token`: {0}")]
    Variable(String),
    /// `jwt` without an `auth` section.
    #[error(
        "has `jwt` but the config has no `auth` section; add `\"auth\": {{\"issuer\": \"https://your-idp\", \
         \"audience\": \"https://this-gateway/mcp\"}}`"
    )]
    JwtWithoutAuth,
    /// A bad claim in `jwt`.
    #[error("in `jwt`: {0}")]
    Claims(String),
    /// A bad pattern in `tools`.
    #[error("in `tools`: {0}")]
    Pattern(PatternError),
    /// A limit that is not a whole number of at least 1.
    #[error("`{field}` must be a whole number from 1 to {max} (got {got}); remove it for no limit")]
    Limit {
        /// `maxSessions`, `maxConcurrent` or `callsPerMinute`.
        field: &'static str,
        /// The largest value taken.
        max: u64,
        /// What was written.
        got: String,
    },
    /// A field of the wrong type.
    #[error("{0}")]
    Shape(String),
    /// The name `default` with `--token` given (that client is the token's).
    #[error(
        "the name `default` is taken by --token (the token's full-access client); rename this client"
    )]
    ReservedName,
}

/// Why a request's credentials were not accepted. The HTTP front answers each as the MCP
/// authorization spec says (see [`super::HttpAuth`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No `Authorization` header: 401, the client should start its login.
    #[error("no credentials: send `Authorization: Bearer <token>`")]
    Missing,
    /// An `Authorization` header that is not `Bearer <token>`.
    #[error("the Authorization header is not `Bearer <token>`")]
    Malformed,
    /// A token that is no client's static token and not a JWT of the issuer.
    #[error("the token is not valid for this gateway")]
    UnknownToken,
    /// A JWT that failed validation (signature, algorithm, issuer, audience, time).
    #[error("the token was refused: {0}")]
    InvalidJwt(String),
    /// A valid JWT whose claims match no client: 403.
    #[error("the token is valid but grants no access to this gateway (its claims match no client)")]
    NoMatchingClient,
    /// The issuer's keys could not be fetched: the token cannot be checked now (503).
    #[error("cannot check the token now: {0}")]
    KeysUnavailable(String),
}
