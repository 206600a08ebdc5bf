//! One connection's OAuth state: the access token its requests carry, kept fresh by a
//! background task, and what happens when that is no longer possible.
//!
//! - A request reads the token without a lock ([`Upstream::bearer`]); past its refresh point it
//!   wakes the keeper and still goes out with the old token while that is valid. Only an expired
//!   token makes a request wait, for the refreshed one, at most [`REFRESH_WAIT`].
//! - The keeper refreshes at a tenth of the lifetime before expiry (at most 60 s; expiry taken a
//!   second early, for servers that count whole seconds: `token::ROUNDING`), and once after
//!   a 401 ([`Upstream::after_unauthorized`]). Before spending the refresh token it looks at the
//!   store: a fresher token written by another process is taken as it is. The refresh itself is
//!   rmcp's, under the entry's lock, and stores the rotated refresh token before the new access
//!   token is handed out.
//! - A transient failure (network, 5xx, timeout) is retried with backoff (1 s doubling to 30 s);
//!   the stored credentials are never touched. A refusal (`invalid_grant`, or nothing left to
//!   refresh with) marks the server as needing a login and closes the connection, so its
//!   supervisor takes its tools off the board and waits for `pegboard login`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use oauth2::TokenResponse;
use rmcp::service::RunningServiceCancellationToken;
use rmcp::transport::auth::{AuthError, AuthorizationManager};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::discovery;
use super::error::NeedsLogin;
use super::token::Token;
use crate::config::OAuthSettings;
use crate::credentials::{
    CredentialRecord, REFUSED, RegistrationKind, RmcpStore, Store, StoreKey, now_epoch,
};

/// The longest a request waits for an expired token to be refreshed.
pub const REFRESH_WAIT: Duration = Duration::from_secs(30);
/// First wait after a failed refresh.
const BACKOFF_MIN: Duration = Duration::from_secs(1);
/// Longest wait between refresh attempts.
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Where a connection's authorization stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthStatus {
    /// No stored credentials: requests go out without a token.
    Anonymous,
    /// A token is in use.
    LoggedIn,
    /// A login is needed (why).
    NeedsLogin(String),
}

/// What the keeper task and the requests share.
struct Shared {
    name: String,
    token: ArcSwapOption<Token>,
    status: watch::Sender<AuthStatus>,
    /// Bumped each time a token is published; requests wait on it.
    generation: watch::Sender<u64>,
    wake: Notify,
    /// A generation a 401 asked to replace (0: none).
    forced: AtomicU64,
    /// The connection to close when a login is needed.
    service: Mutex<Option<RunningServiceCancellationToken>>,
}

/// One connection's OAuth state (cheap to clone; the keeper stops when the last clone goes).
#[derive(Clone)]
pub struct Upstream {
    shared: Arc<Shared>,
    /// Cancels the keeper task when the last clone is dropped (the task holds only `shared`).
    _stop: Arc<DropGuard>,
    stop_token: CancellationToken,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("server", &self.shared.name)
            .field("status", &*self.shared.status.borrow())
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// The OAuth state of the server `name` at `url`: from its stored credentials when there
    /// are usable ones (a keeper task then refreshes them), else anonymous.
    ///
    /// # Errors
    /// [`NeedsLogin`] (inside the error) when the stored credentials were refused or logged out;
    /// a store or setup failure otherwise.
    pub async fn open(name: &str, url: &str, settings: &OAuthSettings) -> anyhow::Result<Self> {
        // A store that cannot be opened (no HOME, no keyring when one is forced) must not keep
        // a server that needs no login from starting: it goes out without a token, and one that
        // does need a login says so (and `pegboard login` then reports the store's problem).
        let store = match Store::open(settings.credentials).await {
            Ok(store) => store,
            Err(e) => {
                tracing::debug!(
                    server = name,
                    "no credential store ({e}); connecting without OAuth"
                );
                return Ok(Self::anonymous(name));
            }
        };
        Self::open_in(&store, name, url, settings).await
    }

    /// [`open`](Self::open) with the credentials read from `store`.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub async fn open_in(
        store: &Store,
        name: &str,
        url: &str,
        settings: &OAuthSettings,
    ) -> anyhow::Result<Self> {
        let entry = store.server(StoreKey::new(url, settings));
        let record = match entry.load().await {
            Ok(record) => record,
            Err(e) => {
                tracing::warn!(server = name, "cannot read its stored credentials: {e}");
                None
            }
        };
        let Some(record) = record else {
            return Ok(Self::anonymous(name));
        };
        if !record.is_logged_in() {
            return Err(NeedsLogin {
                server: name.to_string(),
            }
            .into());
        }
        let mut client = record.client.clone();
        if client.kind == RegistrationKind::Preregistered {
            client.client_secret = settings
                .client_secret
                .as_ref()
                .map(|s| s.expose().to_string());
        }
        let rmcp_store = RmcpStore::new(entry);
        rmcp_store.set_client(client.clone());
        let mut manager = discovery::manager(url, &rmcp_store).await?;
        match record.metadata.clone() {
            Some(metadata) => manager.set_metadata(metadata),
            None => {
                let metadata = discovery::discover(&mut manager, None).await?;
                rmcp_store.set_metadata(metadata);
            }
        }
        discovery::configure(&mut manager, &client, record.scopes())?;
        let upstream = Self::with_status(name, AuthStatus::LoggedIn);
        if let Some(token) = token_from_record(&record, 1) {
            upstream.shared.token.store(Some(Arc::new(token)));
        }
        tokio::spawn(keep(
            upstream.shared.clone(),
            manager,
            rmcp_store,
            upstream.stop_token.clone(),
        ));
        Ok(upstream)
    }

    /// A connection without credentials.
    pub fn anonymous(name: &str) -> Self {
        Self::with_status(name, AuthStatus::Anonymous)
    }

    fn with_status(name: &str, status: AuthStatus) -> Self {
        let ct = CancellationToken::new();
        Self {
            shared: Arc::new(Shared {
                name: name.to_string(),
                token: ArcSwapOption::empty(),
                status: watch::Sender::new(status),
                generation: watch::Sender::new(0),
                wake: Notify::new(),
                forced: AtomicU64::new(0),
                service: Mutex::new(None),
            }),
            _stop: Arc::new(ct.clone().drop_guard()),
            stop_token: ct,
        }
    }

    /// Where the connection's authorization stands.
    #[cfg(any(test, feature = "testing"))]
    pub fn status(&self) -> AuthStatus {
        self.shared.status.borrow().clone()
    }

    /// Whether a login is needed.
    pub fn needs_login(&self) -> bool {
        matches!(*self.shared.status.borrow(), AuthStatus::NeedsLogin(_))
    }

    /// Close `service` when a login becomes needed (its supervisor then takes the server's
    /// tools off the board and waits for the login).
    pub fn close_on_needs_login(&self, service: RunningServiceCancellationToken) {
        if self.needs_login() {
            service.cancel();
            return;
        }
        *self
            .shared
            .service
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(service);
    }

    /// The bearer token for the next request (`None`: send none). Cheap while the token is
    /// fresh; waits only for an expired token's refresh.
    ///
    /// # Errors
    /// [`NeedsLogin`].
    pub async fn bearer(&self) -> Result<Option<String>, NeedsLogin> {
        let shared = &self.shared;
        if let AuthStatus::NeedsLogin(_) = *shared.status.borrow() {
            return Err(self.needs_login_error());
        }
        let Some(token) = shared.token.load_full() else {
            return Ok(None);
        };
        let now = Instant::now();
        if token.due(now) {
            shared.wake.notify_one();
        }
        if !token.expired(now) {
            return Ok(Some(token.secret.to_string()));
        }
        self.newer_than(token.generation).await
    }

    /// After the server answered 401 to a request that carried `sent`: the token to retry with
    /// (refreshed once, or already replaced by another request's refresh), or `None` when there
    /// is no better one.
    pub async fn after_unauthorized(&self, sent: &str) -> Option<String> {
        let shared = &self.shared;
        let token = shared.token.load_full()?;
        if &*token.secret != sent {
            return Some(token.secret.to_string());
        }
        shared.forced.store(token.generation, Ordering::SeqCst);
        shared.wake.notify_one();
        self.newer_than(token.generation).await.ok().flatten()
    }

    /// A request without credentials got 401: the server needs a login.
    pub fn unauthorized_without_token(&self) {
        mark_needs_login(&self.shared, "the server asks for a login".to_string());
    }

    async fn newer_than(&self, generation: u64) -> Result<Option<String>, NeedsLogin> {
        let mut generations = self.shared.generation.subscribe();
        let mut status = self.shared.status.subscribe();
        let waited = tokio::time::timeout(REFRESH_WAIT, async {
            tokio::select! {
                r = generations.wait_for(|g| *g > generation) => r.is_ok(),
                _ = status.wait_for(|s| matches!(s, AuthStatus::NeedsLogin(_))) => false,
            }
        })
        .await;
        if self.needs_login() {
            return Err(self.needs_login_error());
        }
        if !matches!(waited, Ok(true)) {
            // Not refreshed in time (the authorization server is down): the request goes out
            // with the old token and fails with its 401, the keeper keeps trying, and nothing
            // is taken for a missing login (a request without a token would be).
            tracing::debug!(server = %self.shared.name, "no fresh token within {}s", REFRESH_WAIT.as_secs());
        }
        Ok(self.shared.token.load_full().map(|t| t.secret.to_string()))
    }

    fn needs_login_error(&self) -> NeedsLogin {
        NeedsLogin {
            server: self.shared.name.clone(),
        }
    }
}

/// The token of `record` as a connection holds it, its instants derived from the wall clock.
fn token_from_record(record: &CredentialRecord, generation: u64) -> Option<Token> {
    let secret = record.access_token()?;
    let tokens = record.usable_tokens()?;
    let now = Instant::now();
    // Received this long ago (the store keeps whole seconds since the epoch).
    let age = tokens.token_received_at.map_or(Duration::ZERO, |at| {
        Duration::from_secs(now_epoch().saturating_sub(at))
    });
    let received = now.checked_sub(age).unwrap_or(now);
    Some(Token::new(secret, generation, received, record.lifetime()))
}

fn mark_needs_login(shared: &Shared, why: String) {
    shared.token.store(None);
    shared.status.send_replace(AuthStatus::NeedsLogin(why));
    if let Some(service) = shared
        .service
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        service.cancel();
    }
}

/// The keeper task: refresh when due or asked, until the connection goes or a login is needed.
async fn keep(
    shared: Arc<Shared>,
    manager: AuthorizationManager,
    store: RmcpStore,
    ct: CancellationToken,
) {
    let mut backoff = BACKOFF_MIN;
    loop {
        let current = shared.token.load_full();
        let generation = current.as_ref().map_or(0, |t| t.generation);
        let forced = generation != 0 && shared.forced.load(Ordering::SeqCst) == generation;
        let due = current.as_ref().is_none_or(|t| t.due(Instant::now()));
        if !forced && !due {
            let wake_at = current
                .as_ref()
                .and_then(|t| t.refresh_at)
                .unwrap_or_else(|| Instant::now() + Duration::from_secs(24 * 3600));
            tokio::select! {
                () = ct.cancelled() => return,
                () = tokio::time::sleep_until(wake_at) => {}
                () = shared.wake.notified() => {}
            }
            continue;
        }
        // Another process (or a login) may have stored a fresher token: take it as it is.
        if let Ok(Some(record)) = store.server_store().load().await
            && let Some(token) = token_from_record(&record, generation + 1)
            && current.as_ref().is_none_or(|c| c.secret != token.secret)
            && !token.due(Instant::now())
        {
            tracing::debug!(server = %shared.name, "using the token another process refreshed");
            publish(&shared, token);
            backoff = BACKOFF_MIN;
            continue;
        }
        // Under the entry's lock, look again: another process may have refreshed while this
        // one waited for the lock. Then its token is taken and no refresh token is spent, so
        // of several processes (replicas) due at once, exactly one refreshes.
        let held = tokio::select! {
            () = ct.cancelled() => return,
            held = store.lock_for_refresh() => held,
        };
        let _held = match held {
            Ok(held) => held,
            Err(e) => {
                tracing::warn!(
                    server = %shared.name,
                    "cannot lock the stored credentials for a refresh ({e}); trying again in {}s",
                    backoff.as_secs()
                );
                tokio::select! {
                    () = ct.cancelled() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        if let Ok(Some(record)) = store.server_store().load().await
            && let Some(token) = token_from_record(&record, generation + 1)
            && current.as_ref().is_none_or(|c| c.secret != token.secret)
            && !token.due(Instant::now())
        {
            tracing::debug!(server = %shared.name, "using the token another process refreshed");
            publish(&shared, token);
            backoff = BACKOFF_MIN;
            continue;
        }
        let started = Instant::now();
        let refreshed = tokio::select! {
            () = ct.cancelled() => return,
            r = manager.refresh_token() => r,
        };
        match refreshed {
            Ok(response) => {
                let token = Token::new(
                    response.access_token().secret(),
                    generation + 1,
                    started,
                    response.expires_in(),
                );
                tracing::debug!(server = %shared.name, "access token refreshed");
                publish(&shared, token);
                backoff = BACKOFF_MIN;
            }
            Err(AuthError::TokenRefreshRejected(_) | AuthError::AuthorizationRequired) => {
                crate::io::stderr::line(format_args!(
                    "{}: {REFUSED}; {}",
                    shared.name,
                    NeedsLogin {
                        server: shared.name.clone()
                    }
                ));
                tracing::warn!(server = %shared.name, "{REFUSED}: a login is needed");
                mark_needs_login(&shared, REFUSED.to_string());
                return;
            }
            Err(e) => {
                tracing::warn!(
                    server = %shared.name,
                    "token refresh failed ({e}); the credentials are kept, trying again in {}s",
                    backoff.as_secs()
                );
                tokio::select! {
                    () = ct.cancelled() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}

fn publish(shared: &Shared, token: Token) {
    let generation = token.generation;
    shared.token.store(Some(Arc::new(token)));
    shared.status.send_replace(AuthStatus::LoggedIn);
    shared.generation.send_replace(generation);
}
