//! The sandbox on its own: results, errors with positions, every limit, and escape attempts
//! (from published ones: prototype and constructor chains, `globalThis` probing, `import()`,
//! `require`, `fetch`, `Deno`, `process`, QuickJS's `std`/`os`, another run's state).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use pegboard_codemode::{
    CallFuture, Limits, RunError, RunOutcome, ToolEntry, ToolHost, ToolReply, run,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// Tools in plain Rust, with the bookkeeping the tests look at: `math-add` ({a, b} → {sum}),
/// `math-fail` (a ToolError), `text-echo` ({text} → the text as a string), `slow-wait`
/// (returns once `release` is notified, counting how many wait at once).
struct TestHost {
    calls: Mutex<Vec<String>>,
    waiting: AtomicUsize,
    most_waiting: AtomicUsize,
    /// A permit a `slow-wait` call may end.
    release: Semaphore,
    /// A permit a `slow-wait` call arrived.
    arrived: Semaphore,
    /// `slow-wait` calls dropped before they ended (cancelled).
    dropped: std::sync::Arc<AtomicUsize>,
}

/// Counts a call dropped before it ended.
struct Unfinished(Option<std::sync::Arc<AtomicUsize>>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(count) = &self.0 {
            count.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Default for TestHost {
    fn default() -> Self {
        Self {
            calls: Mutex::default(),
            waiting: AtomicUsize::new(0),
            most_waiting: AtomicUsize::new(0),
            release: Semaphore::new(0),
            arrived: Semaphore::new(0),
            dropped: std::sync::Arc::default(),
        }
    }
}

impl ToolHost for TestHost {
    fn tools(&self) -> Vec<ToolEntry> {
        [
            ("math-add", "math", "add"),
            ("math-fail", "math", "fail"),
            ("text-echo", "text", "echo"),
            ("slow-wait", "slow", "wait"),
            ("odd-ns-get-item", "odd-ns", "get-item"),
            ("__proto__-constructor", "__proto__", "constructor"),
        ]
        .into_iter()
        .map(|(name, ns, original)| ToolEntry {
            name: name.into(),
            namespace: Some(ns.into()),
            original: original.into(),
        })
        .collect()
    }

    fn call<'a>(&'a self, name: &'a str, arguments: Value) -> CallFuture<'a> {
        Box::pin(async move {
            self.calls.lock().unwrap().push(name.to_string());
            match name {
                "math-add" => {
                    let a = arguments["a"].as_f64().unwrap_or(0.0);
                    let b = arguments["b"].as_f64().unwrap_or(0.0);
                    ToolReply::Value(json!({"sum": a + b}))
                }
                "math-fail" => ToolReply::Error("math-fail always fails".into()),
                "text-echo" => ToolReply::Value(arguments["text"].clone()),
                "odd-ns-get-item" => ToolReply::Value(json!("item")),
                "__proto__-constructor" => ToolReply::Value(json!("odd but fine")),
                "slow-wait" => {
                    let mut unfinished = Unfinished(Some(std::sync::Arc::clone(&self.dropped)));
                    let now = self.waiting.fetch_add(1, Ordering::SeqCst) + 1;
                    self.most_waiting.fetch_max(now, Ordering::SeqCst);
                    self.arrived.add_permits(1);
                    if let Ok(permit) = self.release.acquire().await {
                        permit.forget();
                    }
                    self.waiting.fetch_sub(1, Ordering::SeqCst);
                    unfinished.0 = None;
                    ToolReply::Value(json!("done"))
                }
                other => ToolReply::Error(format!("unknown tool `{other}`")),
            }
        })
    }
}

async fn run_with(code: &str, limits: &Limits) -> RunOutcome {
    run(code, &TestHost::default(), limits).await
}

async fn value(code: &str) -> Value {
    let outcome = run_with(code, &Limits::default()).await;
    let text = outcome
        .result
        .unwrap_or_else(|e| panic!("the run failed: {e}\nlog: {}", outcome.log));
    serde_json::from_str(&text).unwrap()
}

async fn error(code: &str, limits: &Limits) -> RunError {
    match run_with(code, limits).await.result {
        Ok(value) => panic!("the run answered {value}, expected an error"),
        Err(error) => error,
    }
}

#[tokio::test]
async fn returns_json_and_awaits_tools_both_ways() {
    assert_eq!(value("return 1 + 2").await, json!(3));
    assert_eq!(value("").await, Value::Null);
    assert_eq!(
        value("const r = await tools.math.add({a: 2, b: 3}); return r.sum").await,
        json!(5)
    );
    assert_eq!(
        value(r#"return await call("text-echo", {text: "hi"})"#).await,
        json!("hi")
    );
    assert_eq!(
        value("return await tools.odd_ns.get_item({})").await,
        json!("item")
    );
    // Names that are special in JavaScript are plain keys of `tools`.
    assert_eq!(
        value("return [await tools.__proto__.constructor({}), Object.getPrototypeOf(tools) === Object.prototype]").await,
        json!(["odd but fine", true])
    );
}

#[tokio::test]
async fn a_failing_tool_throws_a_tool_error_with_its_name() {
    let v = value(
        r#"try { await tools.math.fail({}); return "no"; }
           catch (e) { return [e instanceof ToolError, e instanceof Error, e.tool, e.message]; }"#,
    )
    .await;
    assert_eq!(
        v,
        json!([true, true, "math-fail", "math-fail always fails"])
    );
    let unknown = value(r#"try { await call("nope-x", {}) } catch (e) { return e.message }"#).await;
    assert_eq!(unknown, json!("unknown tool `nope-x`"));
}

#[tokio::test]
async fn records_calls_and_captures_the_log() {
    let outcome = run_with(
        r#"console.log("a", 1, {b: 2}); await tools.math.add({a: 1, b: 1});
           try { await tools.math.fail({}) } catch {} console.error(new TypeError("x"));
           return "ok""#,
        &Limits::default(),
    )
    .await;
    assert_eq!(outcome.result.unwrap(), "\"ok\"");
    assert_eq!(outcome.log, "a 1 {\"b\":2}\nTypeError: x\n");
    let calls: Vec<_> = outcome
        .calls
        .iter()
        .map(|c| (c.name.as_str(), c.ok))
        .collect();
    assert_eq!(calls, [("math-add", true), ("math-fail", false)]);
}

#[tokio::test]
async fn promise_all_runs_calls_at_once_up_to_max_parallel() {
    let host = std::sync::Arc::new(TestHost::default());
    let limits = Limits {
        max_parallel: 3,
        ..Limits::default()
    };
    let code = r#"const r = await Promise.all([1,2,3,4,5].map(() => tools.slow.wait({}))); return r.length"#;
    let running = {
        let host = std::sync::Arc::clone(&host);
        tokio::spawn(async move { run(code, &*host, &limits).await })
    };
    // Three arrive before any is released: they run at once; the other two wait their turn
    // (none can start before one of the three ends).
    host.arrived.acquire_many(3).await.unwrap().forget();
    assert_eq!(host.calls.lock().unwrap().len(), 3);
    assert_eq!(host.waiting.load(Ordering::SeqCst), 3);
    host.release.add_permits(5);
    let outcome = running.await.unwrap();
    assert_eq!(outcome.result.unwrap(), "5");
    assert_eq!(host.most_waiting.load(Ordering::SeqCst), 3);
    assert_eq!(outcome.calls.len(), 5);
}

#[tokio::test]
async fn a_syntax_error_says_where() {
    let e = error("const a = 1;\nconst b = ;\nreturn a", &Limits::default()).await;
    assert_eq!(e.kind(), "syntax", "{e}");
    assert_eq!(e.position().map(|p| p.line), Some(2), "{e:?}");
}

#[tokio::test]
async fn a_runtime_error_says_where_and_keeps_the_calls_before() {
    let outcome = run_with(
        "await tools.math.add({a: 1, b: 2});\nconst x = null;\nreturn x.y;",
        &Limits::default(),
    )
    .await;
    let e = outcome.result.unwrap_err();
    assert_eq!(e.kind(), "thrown");
    assert!(e.to_string().starts_with("TypeError: "), "{e}");
    assert_eq!(e.position().map(|p| p.line), Some(3), "{e:?}");
    assert_eq!(outcome.calls.len(), 1);
}

#[tokio::test]
async fn throwing_non_errors_is_reported_as_such() {
    for (code, shown) in [
        ("throw 42", "42"),
        ("throw null", "null"),
        ("throw undefined", "undefined"),
        (r#"throw {code: "E"}"#, r#"{"code":"E"}"#),
        ("return Promise.reject('no')", "\"no\""),
    ] {
        let e = error(code, &Limits::default()).await;
        assert_eq!(e.kind(), "thrown", "{code}: {e}");
        assert_eq!(
            e.to_string(),
            format!("the script threw {shown} (not an Error)"),
            "{code}"
        );
    }
}

fn quick() -> Limits {
    Limits {
        timeout_secs: 1,
        ..Limits::default()
    }
}

#[tokio::test]
async fn an_endless_loop_times_out() {
    let e = error("while (true) {}", &quick()).await;
    assert_eq!(e, RunError::Timeout { secs: 1 });
    let e = error(
        "for (;;) { try { while (true) {} } catch (e) {} }",
        &quick(),
    )
    .await;
    assert_eq!(e, RunError::Timeout { secs: 1 });
}

#[tokio::test]
async fn endless_microtasks_time_out() {
    let e = error(
        "function f() { Promise.resolve().then(f) } f(); await new Promise(() => {}); ",
        &quick(),
    )
    .await;
    assert_eq!(e, RunError::Timeout { secs: 1 });
}

#[tokio::test]
async fn a_pending_call_times_out_on_the_host_deadline() {
    // slow-wait is never released: the script awaits with no code running.
    let e = error("await tools.slow.wait({})", &quick()).await;
    assert_eq!(e, RunError::Timeout { secs: 1 });
}

#[tokio::test]
async fn a_promise_nothing_settles_is_stalled_not_hung() {
    let e = error("await new Promise(() => {})", &Limits::default()).await;
    assert_eq!(e, RunError::Stalled);
}

#[tokio::test]
async fn endless_allocation_runs_out_of_memory() {
    let limits = Limits {
        memory_mib: 16,
        ..Limits::default()
    };
    for code in [
        "const a = []; while (true) a.push(new Array(1000).fill(1));",
        "const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, s: 'v' + i});",
    ] {
        let e = error(code, &limits).await;
        assert_eq!(e, RunError::Memory { mib: 16 }, "{code}");
    }
}

#[tokio::test]
async fn endless_recursion_is_a_stack_error() {
    let e = error(
        "function f(n) { return f(n + 1) + 1 } return f(0)",
        &Limits::default(),
    )
    .await;
    assert_eq!(e.kind(), "stack", "{e}");
}

#[tokio::test]
async fn a_100_mb_return_is_refused() {
    // Within the heap limit it cannot even be built...
    let e = error("return 'x'.repeat(100 * 1024 * 1024)", &Limits::default()).await;
    assert_eq!(e, RunError::Memory { mib: 64 });
    // ...and with room for it, the output cap refuses it.
    let roomy = Limits {
        memory_mib: 512,
        ..Limits::default()
    };
    let e = error("return 'x'.repeat(100 * 1024 * 1024)", &roomy).await;
    assert_eq!(e.kind(), "output", "{e}");
    let e = error("return 'x'.repeat(2 * 1024 * 1024)", &Limits::default()).await;
    assert_eq!(
        e,
        RunError::Output {
            bytes: 2 * 1024 * 1024 + 2,
            max: 1024 * 1024
        }
    );
}

#[tokio::test]
async fn the_log_is_capped() {
    let limits = Limits {
        max_output_kib: 1,
        ..Limits::default()
    };
    let outcome = run_with(
        "for (let i = 0; i < 1000; i++) console.log('line ' + i); return 1",
        &limits,
    )
    .await;
    assert_eq!(outcome.result.unwrap(), "1");
    assert!(outcome.log_truncated);
    assert!(outcome.log.len() <= 1024, "{}", outcome.log.len());
}

#[tokio::test]
async fn max_calls_is_an_error_the_script_can_see() {
    let limits = Limits {
        max_calls: 3,
        ..Limits::default()
    };
    let e = error(
        "for (let i = 0; i < 10; i++) await tools.math.add({a: i, b: 0});",
        &limits,
    )
    .await;
    assert_eq!(e, RunError::TooManyCalls { max: 3 });
    let v = run_with(
        "let n = 0; try { for (;;) { await tools.math.add({a: 1, b: 1}); n++ } } catch (e) { return [n, e.message] }",
        &limits,
    )
    .await;
    let v: Value = serde_json::from_str(&v.result.unwrap()).unwrap();
    assert_eq!(v[0], json!(3));
    assert!(v[1].as_str().unwrap().starts_with("maxCalls:"), "{v}");
}

#[tokio::test]
async fn bad_arguments_are_a_type_error() {
    let v = value(
        r#"const out = [];
           for (const a of [5, "s", [1]]) { try { await call("math-add", a) } catch (e) { out.push(e.name) } }
           try { await call(7, {}) } catch (e) { out.push(e.name) }
           const c = {}; c.c = c; try { await call("math-add", c) } catch (e) { out.push(e.name) }
           return out"#,
    )
    .await;
    assert_eq!(
        v,
        json!([
            "TypeError",
            "TypeError",
            "TypeError",
            "TypeError",
            "TypeError"
        ])
    );
}

#[tokio::test]
async fn dropping_the_run_cancels_it() {
    let host = TestHost::default();
    let limits = Limits::default();
    let started = run("while (true) {}", &host, &limits);
    // Polled once (the thread starts), then dropped: the thread sees the flag and stops; the
    // next run is unaffected.
    let _ = tokio::time::timeout(std::time::Duration::from_millis(1), started).await;
    assert_eq!(value("return 'next'").await, json!("next"));
}

#[tokio::test]
async fn dropping_the_run_cancels_its_calls_in_flight() {
    let host = std::sync::Arc::new(TestHost::default());
    let running = {
        let host = std::sync::Arc::clone(&host);
        tokio::spawn(async move {
            let code = "await Promise.all([tools.slow.wait({}), tools.slow.wait({})])";
            run(code, &*host, &Limits::default()).await
        })
    };
    host.arrived.acquire_many(2).await.unwrap().forget();
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    // Both calls were dropped unfinished (a real host's drop cancels the call upstream).
    assert_eq!(host.dropped.load(Ordering::SeqCst), 2);
    assert_eq!(value("return 'next'").await, json!("next"));
}

// ----- escapes: each must stay inside the engine -----

#[tokio::test]
async fn no_host_globals_exist() {
    let v = value(
        r#"return ["require", "process", "Deno", "fetch", "std", "os", "module", "exports",
                   "setTimeout", "setInterval", "XMLHttpRequest", "WebSocket", "Bun", "scriptArgs",
                   "__loadScript", "print", "hostCall", "hostLog"]
             .filter(n => typeof globalThis[n] !== "undefined")"#,
    )
    .await;
    assert_eq!(v, json!([]));
}

#[tokio::test]
async fn global_probing_finds_only_the_language_and_the_bridge() {
    let v = value(
        r#"const known = new Set(["tools", "call", "ToolError", "console"]);
           return Object.getOwnPropertyNames(globalThis)
             .filter(n => known.has(n) || /^(?:[a-z]|__)/.test(n))
             .filter(n => !["globalThis", "parseInt", "parseFloat", "isNaN", "isFinite",
                            "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent",
                            "escape", "unescape", "eval", "undefined", "performance", "queueMicrotask",
                            "navigator", "structuredClone", "gc", "atob", "btoa"].includes(n))
             .sort()"#,
    )
    .await;
    assert_eq!(v, json!(["ToolError", "call", "console", "tools"]));
}

#[tokio::test]
async fn import_and_require_fail_inside() {
    for code in [
        r#"await import("os")"#,
        r#"await import("std")"#,
        r#"await import("/etc/passwd")"#,
        r#"await import("https://example.com/x.js")"#,
        r#"require("fs")"#,
        r#"fetch("http://127.0.0.1/")"#,
        r#"Deno.readTextFile("/etc/passwd")"#,
        r#"process.env"#,
        r#"std.loadFile("/etc/passwd")"#,
        r#"os.exec(["id"])"#,
    ] {
        let e = error(code, &Limits::default()).await;
        assert!(
            matches!(e, RunError::Thrown { .. } | RunError::Syntax { .. }),
            "{code}: {e}"
        );
    }
}

#[tokio::test]
async fn constructor_chains_reach_only_the_engine() {
    // The published escapes climb from a bridge function to `Function` and evaluate code: here
    // that code runs in the same sandbox and finds the same nothing.
    let v = value(
        r#"const F = tools.math.add.constructor.constructor;
           const g = F("return this")();
           const p = await call.constructor("return typeof process + typeof require + typeof std")();
           const via = console.log.constructor("return globalThis")();
           const proto = Object.getPrototypeOf(tools).constructor.constructor("return typeof os")();
           const ev = eval("typeof fetch");
           return [g === globalThis, p, via === globalThis, proto, ev,
                   Object.keys(tools).sort(), typeof hostCall]"#,
    )
    .await;
    assert_eq!(
        v,
        json!([
            true,
            "undefinedundefinedundefined",
            true,
            "undefined",
            "undefined",
            ["__proto__", "math", "odd_ns", "slow", "text"],
            "undefined"
        ])
    );
}

#[tokio::test]
async fn tampering_with_the_bridge_reaches_nothing_else() {
    // Overwriting builtins the prelude uses changes only the script's own world: calls still go
    // through the host with the prelude's own JSON functions.
    let v = value(
        r#"JSON.parse = () => ({ ok: true, value: "forged" });
           JSON.stringify = () => "{}";
           Object.prototype.ok = true;
           const r = await tools.math.add({a: 1, b: 2});
           return r.sum"#,
    )
    .await;
    assert_eq!(v, json!(3));
}

#[tokio::test]
async fn nothing_survives_from_one_run_to_the_next() {
    assert_eq!(
        value("globalThis.secret = 42; Object.prototype.leak = 1; tools.math.add = () => 'x'; return 1").await,
        json!(1)
    );
    let v =
        value(r#"return [typeof secret, ({}).leak, typeof (await tools.math.add({a: 1, b: 1}))]"#)
            .await;
    assert_eq!(v, json!(["undefined", null, "object"]));
}
