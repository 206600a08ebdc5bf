//! An access token as a connection holds it, and when to refresh it. Data only.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

/// The longest margin before expiry at which a token is refreshed.
pub const MAX_MARGIN: Duration = Duration::from_secs(60);

/// How long before expiry to refresh a token that lives `lifetime`: a tenth of its lifetime,
/// at most 60 s. A one-hour token is refreshed a minute before it expires; a five-second one
/// half a second before (not on every call, as a fixed 60 s margin would).
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
        let expires_at = lifetime.map(|l| received + l);
        let refresh_at = lifetime.map(|l| received + l - refresh_margin(l));
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
        assert!(!t.due(Instant::now()));
        tokio::time::advance(Duration::from_secs(9)).await;
        assert!(t.due(Instant::now()) && !t.expired(Instant::now()));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(t.expired(Instant::now()));
    }
}
