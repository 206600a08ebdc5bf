//! An HTTP call that its request drives while the request waits for it, and that goes on as a
//! task of its own once the request no longer does: its response became an event stream, or
//! the client's connection dropped (the streamable-HTTP spec: "disconnection SHOULD NOT be
//! interpreted as the client cancelling its request"). Most calls end while their request
//! waits, and so cost no task of their own: spawning one per call was a fifth of what the lane
//! added to an HTTP call (callgrind, `crates/pegboard-load/README.md`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A call's answer line for the client; `None` when it has none (cancelled).
pub(crate) type Answer = Option<Vec<u8>>;

type Work = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// A call's work (see the module docs): polled in place, spawned when dropped unfinished (its
/// answer then goes nowhere: its client is gone).
pub(crate) struct Detachable(Option<Work>);

impl Detachable {
    pub(crate) fn new(work: impl Future<Output = Answer> + Send + 'static) -> Self {
        Self(Some(Box::pin(work)))
    }

    /// Go on as a task of its own, handing the answer to `then` when it comes (at once, when
    /// it has come).
    pub(crate) fn detach<F, T>(mut self, then: F)
    where
        F: FnOnce(Answer) -> T + Send + 'static,
        T: Future<Output = ()> + Send + 'static,
    {
        if let Some(work) = self.0.take() {
            spawn(async move { then(work.await).await });
        }
    }
}

impl Future for Detachable {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        let Some(work) = self.0.as_mut() else {
            // Polled after its end (never by this crate): as a cancelled call.
            return Poll::Ready(None);
        };
        let answer = work.as_mut().poll(cx);
        if answer.is_ready() {
            self.0 = None;
        }
        answer
    }
}

impl Drop for Detachable {
    fn drop(&mut self) {
        if let Some(work) = self.0.take() {
            spawn(async move {
                work.await;
            });
        }
    }
}

/// Spawn `work`; outside a runtime (it is shutting down) it ends here, as every task then.
fn spawn(work: impl Future<Output = ()> + Send + 'static) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot;

    #[tokio::test]
    async fn work_dropped_unfinished_goes_on_and_finished_work_is_not_run_again() {
        let (go_tx, go_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = oneshot::channel();
        let mut work = Detachable::new(async move {
            let _ = go_rx.await;
            let _ = done_tx.send(());
            None
        });
        // Polled once (it waits), then dropped as a request is when its client goes away.
        assert!(futures::poll!(&mut work).is_pending());
        drop(work);
        go_tx.send(()).expect("the work is still there");
        done_rx.await.expect("the work ran to its end");

        let (ran_tx, mut ran_rx) = tokio::sync::mpsc::unbounded_channel();
        let mut work = Detachable::new(async move {
            let _ = ran_tx.send(());
            Some(b"answer".to_vec())
        });
        assert_eq!((&mut work).await.as_deref(), Some(&b"answer"[..]));
        drop(work);
        ran_rx.recv().await.expect("ran once");
        assert!(ran_rx.recv().await.is_none(), "ran once only");
    }

    #[tokio::test]
    async fn detached_work_hands_its_answer_on() {
        let (go_tx, go_rx) = oneshot::channel::<()>();
        let mut work = Detachable::new(async move {
            let _ = go_rx.await;
            Some(b"late".to_vec())
        });
        assert!(futures::poll!(&mut work).is_pending());
        let (answer_tx, answer_rx) = oneshot::channel();
        work.detach(move |answer| async move {
            let _ = answer_tx.send(answer);
        });
        go_tx.send(()).expect("the work is still there");
        assert_eq!(
            answer_rx.await.expect("handed on").as_deref(),
            Some(&b"late"[..])
        );
    }
}
