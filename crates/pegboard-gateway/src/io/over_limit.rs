//! How a refused oversized message is counted (`pegboard_messages_over_limit_total`) without
//! this layer knowing telemetry: a process-wide list of hooks that the gateway adds to when its
//! telemetry is on, told by [`super::limit`] and [`super::limit_http`] of each refusal.

use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Told of each message a server sent over its limit, with the server's name (as errors give
/// it): how `pegboard_messages_over_limit_total` counts without this layer knowing telemetry.
pub type OverLimitHook = dyn Fn(&str) + Send + Sync;

/// The hooks of this process (one per gateway with telemetry on), each held weakly: it is told
/// as long as its owner keeps it.
static OVER_LIMIT: Mutex<Vec<Weak<OverLimitHook>>> = Mutex::new(Vec::new());

/// Tell `hook` of every oversized message from now on, until it is dropped.
pub(crate) fn on_over_limit(hook: &Arc<OverLimitHook>) {
    let mut hooks = OVER_LIMIT.lock().unwrap_or_else(PoisonError::into_inner);
    hooks.retain(|h| h.strong_count() > 0);
    hooks.push(Arc::downgrade(hook));
}

/// A message of `server` over its limit was refused: tell the hooks (rare: no cost to calls).
pub(crate) fn over_limit(server: &str) {
    let hooks: Vec<Arc<OverLimitHook>> = OVER_LIMIT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for hook in hooks {
        hook(server);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_is_told_while_it_lives() {
        let seen = Arc::new(Mutex::new(0_usize));
        let hook: Arc<OverLimitHook> = {
            let seen = Arc::clone(&seen);
            Arc::new(move |server: &str| {
                if server == "hooked" {
                    *seen.lock().expect("not poisoned") += 1;
                }
            })
        };
        on_over_limit(&hook);
        over_limit("hooked");
        over_limit("hooked");
        drop(hook);
        over_limit("hooked");
        assert_eq!(*seen.lock().expect("not poisoned"), 2);
    }
}
