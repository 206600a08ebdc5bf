//! The run itself, on its own thread: a fresh QuickJS runtime and context, the prelude (the
//! globals `tools`, `call`, `ToolError`, `console`), the script, and the event loop that runs the
//! engine's jobs and waits for the host's replies to tool calls, until the script's promise
//! settles, its time is up or the run is cancelled.
//!
//! QuickJS runtimes cannot leave the thread they were made on (`!Send`), and a script may
//! compute for as long as its deadline allows: so each run has a thread of its own, never a
//! tokio worker's.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Instant;

use rquickjs::context::EvalOptions;
use rquickjs::{
    CatchResultExt, CaughtError, Context, Ctx, Exception, Function, Object, Persistent, Promise,
    Runtime, Value, promise::PromiseState,
};
use tokio::sync::mpsc::UnboundedSender;

use crate::limits::{JS_STACK, Limits};
use crate::outcome::{Position, RunError};

/// The globals' source (see the file).
const PRELUDE: &str = include_str!("prelude.js");
/// The script's file name in positions.
const FILE: &str = "run_code.js";
/// What the script is wrapped in (on its first line, so line numbers stay the script's): an
/// async function of the memory probe, which a `null` thrown out of the script calls while the
/// script's locals still hold their memory (see [`probe`]).
const HEAD: &str = "(async (__pegboard_probe) => { try {";
const TAIL: &str = "\n} catch (__pegboard_e) { if (__pegboard_e === null) __pegboard_probe(); throw __pegboard_e; } })";
/// Bytes the memory probe asks for.
const PROBE_BYTES: usize = 64 * 1024;

/// A tool call the script made, for the host.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) id: u64,
    pub(crate) name: String,
    /// The arguments' JSON text.
    pub(crate) arguments: String,
}

/// The host's reply to call `id`: the JSON envelope the prelude reads
/// (`{"ok":true,"value":...}` or `{"ok":false,"error":"..."}`).
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) id: u64,
    pub(crate) envelope: String,
}

/// Everything one run needs on its thread.
pub(crate) struct Job {
    pub(crate) code: String,
    /// The `tools` object's layout as JSON (names.rs).
    pub(crate) layout: String,
    pub(crate) limits: Limits,
    pub(crate) deadline: Instant,
    pub(crate) requests: UnboundedSender<Request>,
    pub(crate) replies: Receiver<Reply>,
    /// Set when the run's caller is gone.
    pub(crate) cancel: Arc<AtomicBool>,
}

/// What the thread hands back.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) result: Result<String, RunError>,
    pub(crate) log: String,
    pub(crate) log_truncated: bool,
}

/// The run's state the host functions share.
struct State {
    /// Each call in flight's `resolve`, by id.
    pending: RefCell<HashMap<u64, Persistent<Function<'static>>>>,
    next_id: Cell<u64>,
    calls: Cell<usize>,
    call_limit_hit: Cell<bool>,
    log: RefCell<String>,
    log_truncated: Cell<bool>,
    timed_out: Rc<Cell<bool>>,
    /// The memory probe found the heap full when the script threw `null`.
    out_of_memory: Cell<bool>,
}

/// Run `job` to its end (blocks the thread).
pub(crate) fn execute(job: Job) -> Ended {
    let state = Rc::new(State {
        pending: RefCell::default(),
        next_id: Cell::new(0),
        calls: Cell::new(0),
        call_limit_hit: Cell::new(false),
        log: RefCell::default(),
        log_truncated: Cell::new(false),
        timed_out: Rc::new(Cell::new(false)),
        out_of_memory: Cell::new(false),
    });
    let result = start(&job, &state);
    let log = std::mem::take(&mut *state.log.borrow_mut());
    Ended {
        result,
        log,
        log_truncated: state.log_truncated.get(),
    }
}

fn start(job: &Job, state: &Rc<State>) -> Result<String, RunError> {
    let runtime = Runtime::new().map_err(|e| RunError::Start(e.to_string()))?;
    runtime.set_memory_limit(job.limits.memory_bytes());
    runtime.set_max_stack_size(JS_STACK);
    let (deadline, cancel, timed_out) = (
        job.deadline,
        Arc::clone(&job.cancel),
        Rc::clone(&state.timed_out),
    );
    // Called every few thousand instructions of running code: stops a loop that never awaits.
    runtime.set_interrupt_handler(Some(Box::new(move || {
        if cancel.load(Ordering::Relaxed) {
            return true;
        }
        let late = Instant::now() >= deadline;
        if late {
            timed_out.set(true);
        }
        late
    })));
    let context = Context::full(&runtime).map_err(|e| RunError::Start(e.to_string()))?;
    let result = context.with(|ctx| {
        let result = drive(&ctx, job, state);
        // Every handle into the heap goes before the runtime does.
        state.pending.borrow_mut().clear();
        result
    });
    drop(context);
    drop(runtime);
    result
}

fn drive<'js>(ctx: &Ctx<'js>, job: &Job, state: &Rc<State>) -> Result<String, RunError> {
    install(ctx, job, state).map_err(|e| RunError::Start(format!("the prelude failed: {e}")))?;
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(FILE.to_string());
    let source = format!("{HEAD}{}{TAIL}", job.code);
    let script: Function<'js> = match ctx.eval_with_options(source, options).catch(ctx) {
        Ok(script) => script,
        Err(caught) => return Err(classify(ctx, caught, job, state, true)),
    };
    let started = probe(ctx, state).and_then(|probe| script.call::<_, Promise<'js>>((probe,)));
    let promise = match started.catch(ctx) {
        Ok(promise) => promise,
        Err(caught) => return Err(classify(ctx, caught, job, state, false)),
    };
    loop {
        while !stopped(job, state) && ctx.execute_pending_job() {}
        if job.cancel.load(Ordering::Relaxed) {
            return Err(RunError::Cancelled);
        }
        if stopped(job, state) {
            return Err(timeout(job));
        }
        match promise.state() {
            PromiseState::Resolved => return finish(ctx, &promise, job, state),
            PromiseState::Rejected => {
                let caught = match promise.result::<Value>() {
                    Some(Err(error)) => CaughtError::from_error(ctx, error),
                    _ => CaughtError::Value(Value::new_undefined(ctx.clone())),
                };
                return Err(classify(ctx, caught, job, state, false));
            }
            PromiseState::Pending => {}
        }
        if state.pending.borrow().is_empty() {
            return Err(RunError::Stalled);
        }
        let wait = job.deadline.saturating_duration_since(Instant::now());
        match job.replies.recv_timeout(wait) {
            Ok(reply) => {
                let resolve = state.pending.borrow_mut().remove(&reply.id);
                if let Some(resolve) = resolve {
                    let resolved = resolve
                        .restore(ctx)
                        .and_then(|f| f.call::<_, ()>((reply.envelope,)));
                    if let Err(error) = resolved {
                        let caught = CaughtError::from_error(ctx, error);
                        return Err(classify(ctx, caught, job, state, false));
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => return Err(timeout(job)),
            Err(RecvTimeoutError::Disconnected) => return Err(RunError::Cancelled),
        }
    }
}

/// Whether the run must stop: cancelled, or past its deadline.
fn stopped(job: &Job, state: &State) -> bool {
    state.timed_out.get() || job.cancel.load(Ordering::Relaxed) || Instant::now() >= job.deadline
}

fn timeout(job: &Job) -> RunError {
    RunError::Timeout {
        secs: job.limits.timeout_secs,
    }
}

/// The globals, from the prelude and the two host functions.
fn install<'js>(ctx: &Ctx<'js>, job: &Job, state: &Rc<State>) -> rquickjs::Result<()> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.filename = Some("prelude.js".to_string());
    let prelude: Function<'js> = ctx.eval_with_options(PRELUDE, options)?;
    let host_call = host_call(ctx, job, state)?;
    let host_log = host_log(ctx, job.limits.output_bytes(), state)?;
    prelude.call::<_, ()>((host_call, host_log, job.layout.as_str()))
}

/// `hostCall(name, argumentsJson)`: a promise of the reply's envelope.
fn host_call<'js>(ctx: &Ctx<'js>, job: &Job, state: &Rc<State>) -> rquickjs::Result<Function<'js>> {
    let (state, requests, max) = (Rc::clone(state), job.requests.clone(), job.limits.max_calls);
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, name: String, arguments: String| -> rquickjs::Result<Promise<'js>> {
            if state.calls.get() >= max {
                state.call_limit_hit.set(true);
                return Err(Exception::throw_range(
                    &ctx,
                    &format!(
                        "maxCalls: this run already made {max} tool calls, the most one run may make"
                    ),
                ));
            }
            state.calls.set(state.calls.get() + 1);
            let id = state.next_id.get();
            state.next_id.set(id + 1);
            let (promise, resolve, _reject) = ctx.promise()?;
            state
                .pending
                .borrow_mut()
                .insert(id, Persistent::save(&ctx, resolve));
            if requests
                .send(Request {
                    id,
                    name,
                    arguments,
                })
                .is_err()
            {
                state.pending.borrow_mut().remove(&id);
                return Err(Exception::throw_internal(&ctx, "the run is over"));
            }
            Ok(promise)
        },
    )
}

/// The memory probe: QuickJS out of memory so deep that it cannot make its own error throws
/// `null`, as a script may too. Called when the script throws `null` (its locals still alive), the
/// probe asks the heap for [`PROBE_BYTES`]; refused, the run is out of memory.
fn probe<'js>(ctx: &Ctx<'js>, state: &Rc<State>) -> rquickjs::Result<Function<'js>> {
    let state = Rc::clone(state);
    Function::new(ctx.clone(), move |ctx: Ctx<'js>| {
        let asked = ctx.eval::<Value, _>(format!("new Uint8Array({PROBE_BYTES})"));
        if asked.is_err() {
            // Clear the probe's own exception: the script's `null` is what propagates.
            let _ = ctx.catch();
            state.out_of_memory.set(true);
        }
    })
}

/// `hostLog(line)`: appended to the log until it holds `cap` bytes.
fn host_log<'js>(ctx: &Ctx<'js>, cap: usize, state: &Rc<State>) -> rquickjs::Result<Function<'js>> {
    let state = Rc::clone(state);
    Function::new(ctx.clone(), move |line: String| {
        let mut log = state.log.borrow_mut();
        if state.log_truncated.get() {
            return;
        }
        let room = cap.saturating_sub(log.len());
        if line.len() < room {
            log.push_str(&line);
            log.push('\n');
        } else {
            let mut end = room;
            while end > 0 && !line.is_char_boundary(end) {
                end -= 1;
            }
            log.push_str(&line[..end]);
            state.log_truncated.set(true);
        }
    })
}

/// The resolved value as JSON text, within the output cap.
fn finish<'js>(
    ctx: &Ctx<'js>,
    promise: &Promise<'js>,
    job: &Job,
    state: &Rc<State>,
) -> Result<String, RunError> {
    let value = match promise.result::<Value>() {
        Some(Ok(value)) => value,
        Some(Err(error)) => {
            return Err(classify(
                ctx,
                CaughtError::from_error(ctx, error),
                job,
                state,
                false,
            ));
        }
        None => return Err(RunError::Stalled),
    };
    let text = match ctx.json_stringify(value).catch(ctx) {
        Ok(Some(text)) => text
            .to_string()
            .map_err(|e| RunError::Start(e.to_string()))?,
        Ok(None) => "null".to_string(),
        Err(caught) => return Err(classify(ctx, caught, job, state, false)),
    };
    let max = job.limits.output_bytes();
    if text.len() > max {
        return Err(RunError::Output {
            bytes: text.len(),
            max,
        });
    }
    Ok(text)
}

/// What a thrown value means for the run.
fn classify<'js>(
    ctx: &Ctx<'js>,
    caught: CaughtError<'js>,
    job: &Job,
    state: &State,
    compiling: bool,
) -> RunError {
    if job.cancel.load(Ordering::Relaxed) {
        return RunError::Cancelled;
    }
    if stopped(job, state) {
        return timeout(job);
    }
    let memory = || RunError::Memory {
        mib: job.limits.memory_mib,
    };
    let (name, message, stack) = match &caught {
        CaughtError::Exception(e) => (
            string_of(e.as_object(), "name").unwrap_or_else(|| "Error".to_string()),
            e.message().unwrap_or_default(),
            e.stack().unwrap_or_default(),
        ),
        CaughtError::Value(value) => match value.as_object() {
            Some(object) if value.is_error() => (
                string_of(object, "name").unwrap_or_else(|| "Error".to_string()),
                string_of(object, "message").unwrap_or_default(),
                string_of(object, "stack").unwrap_or_default(),
            ),
            _ if value.is_null() && state.out_of_memory.get() => return memory(),
            _ => {
                return RunError::Thrown {
                    message: format!(
                        "the script threw {} (not an Error)",
                        describe(ctx, value.clone())
                    ),
                    position: None,
                };
            }
        },
        CaughtError::Error(rquickjs::Error::Allocation) => return memory(),
        CaughtError::Error(other) => {
            return RunError::Thrown {
                message: other.to_string(),
                position: None,
            };
        }
    };
    let position = position(&stack);
    if message.contains("out of memory") {
        return memory();
    }
    if message.contains("stack overflow") || message.contains("call stack size exceeded") {
        return RunError::Stack { position };
    }
    if state.call_limit_hit.get() && message.starts_with("maxCalls:") {
        return RunError::TooManyCalls {
            max: job.limits.max_calls,
        };
    }
    if compiling && name == "SyntaxError" {
        return RunError::Syntax { message, position };
    }
    RunError::Thrown {
        message: format!("{name}: {message}"),
        position,
    }
}

fn string_of(object: &Object<'_>, key: &str) -> Option<String> {
    object.get::<_, Option<String>>(key).ok().flatten()
}

/// A thrown non-Error value, shown as JSON where it has one (at most 200 characters).
fn describe<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> String {
    let text = if value.is_undefined() {
        "undefined".to_string()
    } else {
        match ctx.json_stringify(value).catch(ctx) {
            Ok(Some(text)) => text.to_string().unwrap_or_else(|_| "a value".to_string()),
            _ => "a value".to_string(),
        }
    };
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The first `run_code.js:LINE:COLUMN` of a stack, as the script's own position.
fn position(stack: &str) -> Option<Position> {
    let marker = format!("{FILE}:");
    let at = stack.find(&marker)? + marker.len();
    let mut numbers = stack[at..]
        .split(|c: char| !c.is_ascii_digit())
        .take(2)
        .map(str::parse::<u32>);
    let line = numbers.next()?.ok()?;
    let mut column = numbers.next()?.ok()?;
    if line == 1 {
        column = column
            .saturating_sub(u32::try_from(HEAD.len()).unwrap_or(0))
            .max(1);
    }
    Some(Position { line, column })
}
