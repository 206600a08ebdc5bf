//! An access token as a connection holds it, and when to refresh it. Data only.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

/// The longest margin before expiry at which a token is refreshed.
pub const MAX_MARGIN: Duration = Duration::from_secs(60);

/// How much sooner than `received + expires_in` a token may stop working: servers count a
/// token's life in whole seconds from an issue time they round down (a JWT's `iat`, the `exp`
/// that `oidc-provider` checks), so a 5-second token received at x.9 s is refused from x+4 on.
/// Measured: without this, a gateway refreshing 0.5 s before the nominal expiry sent 3 expired
/// tokens in 30 s of calls (`tests/e2e_oauth_refresh.rs`).
pub const ROUNDING: Duration = Duration::from_secs(1);

/// How long a token that lives `lifetime` surely works: `lifetime` less [`ROUNDING`] (less half
/// of a lifetime under 2 s, so a short one is still used at all).
pub fn usable(lifetime: Duration) -> Duration {
    lifetime - ROUNDING.min(lifetime / 2)
}

/// How long before expiry to refresh a token that lives `lifetime`: a tenth of its lifetime,
/// at most 60 s. A one-hour token is refreshed a minute before it expires; a five-second one
/// half a second before (not on every call, as a fixed 60 s margin would). Expiry is the
/// [`usable`] one: a second before the nominal one.
pub fn refresh_margin(lifetime: Duration) -> Duration {
    (lifetime / 10).min(MAX_MARGIN)
}

/// The access token in use, with its schedule. `Debug` never shows the token.
#[derive(Clone)]
pub struct Token {
    /// The token itself.
    pub secret: Box<str>,
    /// Counts the tokens this connection has had (1 for the first).
    pub generation: u64,
    /// Refresh from this instant on (`None`: never, the server gave no lifetime).
    pub refresh_at: Option<Instant>,
    /// Unusable from this instant on (`None`: unknown).
    pub expires_at: Option<Instant>,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("secret", &"[redacted]")
            .field("generation", &self.generation)
            .field("refresh_at", &self.refresh_at)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl Token {
    /// A token received at `received` (an instant) that lives `lifetime` (when the server said).
    pub fn new(
        secret: &str,
        generation: u64,
        received: Instant,
        lifetime: Option<Duration>,
    ) -> Self {
        let expires_at = lifetime.map(|l| received + usable(l));
        let refresh_at = lifetime.map(|l| received + usable(l) - refresh_margin(l));
        Self {
            secret: secret.into(),
            generation,
            refresh_at,
            expires_at,
        }
    }

    /// Whether it is past its refresh point at `now`.
    pub fn due(&self, now: Instant) -> bool {
        self.refresh_at.is_some_and(|at| now >= at)
    }

    /// Whether it has expired at `now`.
    pub fn expired(&self, now: Instant) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_is_a_tenth_of_the_lifetime_at_most_a_minute() {
        assert_eq!(refresh_margin(Duration::from_secs(3600)), MAX_MARGIN);
        assert_eq!(
            refresh_margin(Duration::from_secs(300)),
            Duration::from_secs(30)
        );
        assert_eq!(
            refresh_margin(Duration::from_secs(5)),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn debug_never_shows_the_token() {
        let t = Token::new(
            "tok-secret-123",
            1,
            Instant::now(),
            Some(Duration::from_secs(5)),
        );
        let text = format!("{t:?}");
        assert!(!text.contains("tok-secret-123"), "{text}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_is_due_before_it_expires() {
        let t = Token::new("x", 1, Instant::now(), Some(Duration::from_secs(10)));
        tokio::time::advance(Duration::from_secs(8) - Duration::from_millis(1)).await;
        assert!(!t.due(Instant::now()));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(t.due(Instant::now()) && !t.expired(Instant::now()));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(t.expired(Instant::now()));
    }

    #[test]
    fn a_token_is_taken_for_expired_a_second_early_for_whole_second_clocks() {
        assert_eq!(usable(Duration::from_secs(5)), Duration::from_secs(4));
        assert_eq!(usable(Duration::from_secs(3600)), Duration::from_secs(3599));
        assert_eq!(usable(Duration::from_secs(1)), Duration::from_millis(500));
        let now = Instant::now();
        let t = Token::new("x", 1, now, Some(Duration::from_secs(5)));
        assert_eq!(t.expires_at, Some(now + Duration::from_secs(4)));
        assert_eq!(t.refresh_at, Some(now + Duration::from_millis(3500)));
    }
}
