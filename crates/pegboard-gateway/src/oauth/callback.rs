//! The login's redirect listener on 127.0.0.1: it takes exactly one callback whose `state` is the
//! login's, answers the browser with a short page, and closes. A request with another `state`, or
//! any request after the one that counted, gets 400 and changes nothing.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Html;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::error::LoginError;

/// The path the authorization server sends the browser back to.
pub const CALLBACK_PATH: &str = "/callback";

/// What the authorization server sent back. `Debug` leaves the code out.
pub struct Callback {
    /// The authorization code.
    pub code: String,
    /// The `state` (equal to the login's).
    pub state: String,
    /// RFC 9207 `iss`, when the server sends it.
    pub issuer: Option<String>,
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callback")
            .field("code", &"[redacted]")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// A bound redirect listener, not yet serving.
#[derive(Debug)]
pub struct RedirectListener {
    listener: TcpListener,
    port: u16,
}

impl RedirectListener {
    /// Listen on `127.0.0.1:preferred`; when that port is taken, on a free one (the second value
    /// is then `true`: a client registered with the old port must register again).
    ///
    /// # Errors
    /// Not even a free port could be had.
    pub async fn bind(preferred: u16) -> Result<(Self, bool), LoginError> {
        let (listener, moved) = match TcpListener::bind((Ipv4Addr::LOCALHOST, preferred)).await {
            Ok(listener) => (listener, false),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                    .await
                    .map_err(|source| LoginError::Listen { port: 0, source })?;
                (listener, true)
            }
            Err(source) => {
                return Err(LoginError::Listen {
                    port: preferred,
                    source,
                });
            }
        };
        let port = listener
            .local_addr()
            .map_err(|source| LoginError::Listen {
                port: preferred,
                source,
            })?
            .port();
        Ok((Self { listener, port }, moved))
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Serve until one callback carries `state`, or `timeout` passes. `server` names the server
    /// on the page shown in the browser.
    ///
    /// # Errors
    /// [`LoginError::Refused`] when the authorization server sent an `error` back,
    /// [`LoginError::TimedOut`].
    pub async fn wait(
        self,
        state: &str,
        server: &str,
        timeout: Duration,
    ) -> Result<Callback, LoginError> {
        let (tx, rx) = oneshot::channel();
        let shared = Arc::new(Shared {
            state: state.to_string(),
            server: server.to_string(),
            done: Mutex::new(Some(tx)),
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let app = Router::new()
            .route(CALLBACK_PATH, get(callback))
            .with_state(shared);
        let serve = axum::serve(self.listener, app).with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
        let serving = tokio::spawn(async move { serve.await });
        let outcome = tokio::time::timeout(timeout, rx).await;
        // The page of the callback that counted is answered before the listener stops.
        let _ = stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(2), serving).await;
        match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(_)) | Err(_) => Err(LoginError::TimedOut(timeout.as_secs())),
        }
    }
}

struct Shared {
    state: String,
    server: String,
    /// Taken by the one callback that counts.
    done: Mutex<Option<oneshot::Sender<Result<Callback, LoginError>>>>,
}

async fn callback(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
) -> (StatusCode, Html<String>) {
    let mut code = None;
    let mut state = None;
    let mut issuer = None;
    let mut error = None;
    for (key, value) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "code" => code = Some(value.into_owned()),
            "state" => state = Some(value.into_owned()),
            "iss" => issuer = Some(value.into_owned()),
            "error" => error = Some(value.into_owned()),
            "error_description" if error.is_some() => {
                error = error.map(|e| format!("{e} ({value})"));
            }
            _ => {}
        }
    }
    if state.as_deref() != Some(shared.state.as_str()) {
        return page(
            StatusCode::BAD_REQUEST,
            "This is not the login PegBoard is waiting for (its state does not match).",
        );
    }
    let result = match (code, error) {
        (_, Some(error)) => Err(LoginError::Refused(error)),
        (Some(code), None) => Ok(Callback {
            code,
            state: shared.state.clone(),
            issuer,
        }),
        (None, None) => {
            return page(
                StatusCode::BAD_REQUEST,
                "The callback has no authorization code.",
            );
        }
    };
    let Some(done) = shared
        .done
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    else {
        return page(StatusCode::BAD_REQUEST, "This login was already completed.");
    };
    let ok = result.is_ok();
    let _ = done.send(result);
    if ok {
        page(
            StatusCode::OK,
            &format!(
                "PegBoard got the login for `{}`. You can close this tab.",
                html_escape(&shared.server)
            ),
        )
    } else {
        page(
            StatusCode::OK,
            "The authorization server refused the login; see the terminal.",
        )
    }
}

fn page(status: StatusCode, text: &str) -> (StatusCode, Html<String>) {
    (
        status,
        Html(format!(
            "<!doctype html><meta charset=\"utf-8\"><title>PegBoard login</title><p>{text}</p>"
        )),
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> reqwest::Client {
        super::super::discovery::install_tls();
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client")
    }

    #[tokio::test]
    async fn only_the_callback_with_the_logins_state_counts() {
        let (listener, moved) = RedirectListener::bind(0).await.expect("bind");
        assert!(!moved);
        let base = listener.redirect_uri();
        let waiting = tokio::spawn(async move {
            listener
                .wait("the-state", "demo", Duration::from_secs(30))
                .await
        });
        let http = client();
        // Another login's state, or no code: 400, and the login goes on.
        for query in ["state=other&code=c1", "state=the-state", "code=c2"] {
            let answer = http
                .get(format!("{base}?{query}"))
                .send()
                .await
                .expect("answer");
            assert_eq!(answer.status(), 400, "{query}");
        }
        assert!(!waiting.is_finished());
        let answer = http
            .get(format!(
                "{base}?state=the-state&code=the-code&iss=https%3A%2F%2Fas.example"
            ))
            .send()
            .await
            .expect("answer");
        assert_eq!(answer.status(), 200);
        assert!(answer.text().await.expect("page").contains("`demo`"));
        let callback = waiting.await.expect("join").expect("callback");
        assert_eq!(callback.code, "the-code");
        assert_eq!(callback.issuer.as_deref(), Some("https://as.example"));
        assert!(!format!("{callback:?}").contains("the-code"));
        // The listener is closed: nothing answers any more.
        assert!(
            http.get(format!("{base}?state=the-state&code=again"))
                .send()
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn an_error_from_the_authorization_server_ends_the_login() {
        let (listener, _) = RedirectListener::bind(0).await.expect("bind");
        let base = listener.redirect_uri();
        let waiting =
            tokio::spawn(async move { listener.wait("s", "demo", Duration::from_secs(30)).await });
        let answer = client()
            .get(format!(
                "{base}?state=s&error=access_denied&error_description=no"
            ))
            .send()
            .await
            .expect("answer");
        assert_eq!(answer.status(), 200);
        let err = waiting.await.expect("join").expect_err("refused");
        assert_eq!(
            err.to_string(),
            "the authorization server refused the login: access_denied (no)"
        );
    }

    #[tokio::test]
    async fn a_busy_port_gives_way_to_a_free_one() {
        let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = busy.local_addr().expect("addr").port();
        let (listener, moved) = RedirectListener::bind(port).await.expect("bind");
        assert!(moved);
        assert_ne!(listener.port(), port);
    }
}
