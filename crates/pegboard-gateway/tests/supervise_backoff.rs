//! The supervisor's restart schedule (`src/supervise/backoff.rs`: 1 s, doubling to 60 s, 1 s again
//! after a run of a minute), with a real server process that exits on purpose and tokio's paused
//! clock: no wall-clock wait decides anything.
//!
//! The server is this very binary, started by the supervisor with `PEGBOARD_BACKOFF_TEST_CHILD`
//! set: then it is the demo test server over stdio, whose `crash` tool exits the process. That is
//! why this test has no libtest harness: libtest would print to stdout, which belongs to MCP.
//!
//! The clock: a blocking task holds tokio's auto-advance off for the whole test (tokio documents
//! that a running `spawn_blocking` task inhibits it), so the real I/O of a restart (spawn,
//! handshake) takes no time on the test's clock, and time moves only by `tokio::time::advance`.
//! The supervisor's own log lines, captured with their instant on that clock, are the events:
//! "stopped ... restarting in Ns" when the server is gone, "restart: starting it again" when the
//! wait is over, "restarted" when it is back. For each death the test moves the clock to 1 ms
//! before the expected restart (no try may have started), then to it (the try starts then,
//! exactly).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pegboard::PegBoard;
use pegboard_gateway::Progress;
use pegboard_gateway::testing::{Supervisors, start_all};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

/// Set in the environment of the server the supervisor starts.
const CHILD: &str = "PEGBOARD_BACKOFF_TEST_CHILD";
/// The whole test's bound on the wall clock (it takes a few seconds): past it, it fails.
const WALL_LIMIT: Duration = Duration::from_secs(180);
/// For the handshakes: never reached on the held clock.
const HANDSHAKE: Duration = Duration::from_secs(30);
/// The expected waits of eight deaths in a row, each right after its restart.
const SHORT_RUNS: [u64; 8] = [1, 2, 4, 8, 16, 32, 60, 60];
/// A run this long resets the schedule.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

fn main() {
    if std::env::var_os(CHILD).is_some() {
        serve_as_child();
        return;
    }
    // A hang fails the test instead of blocking CI: the watchdog waits for the schedule's end
    // (the sender dropped with `main`'s frame) and gives up after WALL_LIMIT.
    let (_finished, watched) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = watched.recv_timeout(WALL_LIMIT) {
            eprintln!("supervise_backoff: no end within {WALL_LIMIT:?} of wall time");
            std::process::exit(2);
        }
    });
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    runtime.block_on(schedule(events));
    println!("supervise_backoff: the restart schedule held");
}

/// The demo test server over stdio; its `crash` tool exits the process (code 3).
fn serve_as_child() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if let Err(e) = runtime.block_on(demo_servers::launch::run_by_name("test", Vec::new())) {
        eprintln!("test server: {e:#}");
        std::process::exit(1);
    }
}

/// One supervisor log line and when it came, on tokio's clock.
#[derive(Clone, Debug)]
struct Event {
    at: Instant,
    message: String,
}

/// The supervisor's log lines so far (a `tracing` layer).
#[derive(Clone)]
struct Events(Arc<Mutex<watch::Sender<Vec<Event>>>>);

impl Default for Events {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(watch::Sender::new(Vec::new()))))
    }
}

#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if !event
            .metadata()
            .target()
            .starts_with("pegboard_gateway::supervise")
        {
            return;
        }
        let mut message = Message::default();
        event.record(&mut message);
        let event = Event {
            at: Instant::now(),
            message: message.0,
        };
        eprintln!("  [{:?}] {}", event.at, event.message);
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send_modify(|all| all.push(event));
    }
}

impl Events {
    fn subscribe(&self) -> watch::Receiver<Vec<Event>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .subscribe()
    }

    /// The lines containing `needle` so far.
    fn matching(&self, needle: &str) -> Vec<Event> {
        self.subscribe()
            .borrow()
            .iter()
            .filter(|e| e.message.contains(needle))
            .cloned()
            .collect()
    }

    /// The `n`th line (1-based) containing `needle`, once it has come.
    async fn nth(&self, needle: &str, n: usize) -> Event {
        let mut rx = self.subscribe();
        let all = rx
            .wait_for(|all| all.iter().filter(|e| e.message.contains(needle)).count() >= n)
            .await
            .expect("the layer lives as long as the test");
        all.iter()
            .filter(|e| e.message.contains(needle))
            .nth(n - 1)
            .cloned()
            .expect("counted")
    }
}

/// Let every task the clock woke run (no time passes: auto-advance is held off).
async fn settle() {
    for _ in 0..200 {
        tokio::task::yield_now().await;
    }
}

const STOPPED: &str = "stopped (process exited or connection dropped)";
const TRYING: &str = "restart: starting it again";
const RESTARTED: &str = "restarted,";

async fn schedule(events: Events) {
    // Holds auto-advance off until the test is over (see the module docs).
    let (release, held) = std::sync::mpsc::channel::<()>();
    let hold = tokio::task::spawn_blocking(move || {
        let _ = held.recv();
    });

    let exe = std::env::current_exe().expect("this test's path");
    let text = json!({"mcpServers": {"t": {
        "command": exe,
        "env": {CHILD: "1", "RUST_LOG": "warn"},
    }}})
    .to_string();
    let config =
        pegboard_gateway::config::parse(&text, std::path::Path::new("pegboard.json"), &|_| None)
            .expect("config");
    let board = PegBoard::new();
    let started = start_all(&board, &config, HANDSHAKE, Progress::Quiet).await;
    let outcome = started.outcomes.into_iter().next().expect("one server");
    let index = match (&outcome.result, outcome.index) {
        (Ok(_), Some(index)) => index,
        (result, _) => panic!("the server did not start: {:?}", result.as_ref().err()),
    };
    let supervisors = Supervisors::new(&board, HANDSHAKE);
    let supervised = supervisors.spawn(&config.servers[0], index, outcome.stderr);

    let mut deaths = 0;
    // Short runs, then one of a minute.
    let plan: Vec<(Duration, u64)> = SHORT_RUNS
        .iter()
        .map(|&wait| (Duration::ZERO, wait))
        .chain([(HEALTHY_RUN, 1)])
        .collect();
    for (run, expected) in plan {
        if !run.is_zero() {
            tokio::time::advance(run).await;
            settle().await;
        }
        deaths += 1;
        // The server exits before it answers: the call fails, one way or another.
        let crashed = board.call_tool("t-crash", json!({})).await;
        assert!(
            crashed.as_ref().map_or(true, |r| r.is_error == Some(true)),
            "the crash call answered: {crashed:?}"
        );
        let stopped = events.nth(STOPPED, deaths).await;
        assert!(
            stopped
                .message
                .contains(&format!("restarting in {expected}s")),
            "death {deaths}: {}",
            stopped.message
        );
        assert!(!supervised.is_up(), "death {deaths}: still on the board");

        // 1 ms short of the wait: no try yet.
        let wait = Duration::from_secs(expected);
        tokio::time::advance(wait - Duration::from_millis(1)).await;
        settle().await;
        assert_eq!(
            events.matching(TRYING).len(),
            deaths - 1,
            "death {deaths}: a restart started before {expected}s"
        );
        // At the wait: the try starts, at that very instant.
        tokio::time::advance(Duration::from_millis(1)).await;
        let trying = events.nth(TRYING, deaths).await;
        assert_eq!(
            trying.at - stopped.at,
            wait,
            "death {deaths}: restarted after {:?}, not {expected}s",
            trying.at - stopped.at
        );
        // Back on the board (the real handshake took no time on the held clock).
        let restarted = events.nth(RESTARTED, deaths).await;
        assert_eq!(restarted.at, trying.at);
        assert!(supervised.is_up(), "death {deaths}: not back on the board");
        let echoed = board
            .call_tool("t-echo", json!({"text": "back"}))
            .await
            .expect("the restarted server answers");
        assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    }

    supervisors.stop_all().await;
    board.shutdown().await;
    drop(release);
    hold.await.expect("the clock hold ends");
}
