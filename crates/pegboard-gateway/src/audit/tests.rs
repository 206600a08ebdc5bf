//! The audit log's writer: concurrency, losses, failures, reopening.

use std::collections::HashSet;
use std::io::Read;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use super::{ArgumentsMode, AuditLog, AuditRecord, AuditTarget, Outcome};

fn record(i: usize) -> AuditRecord {
    let mut r = AuditRecord::new(
        format!("client-{}", i % 3).into(),
        "tools/call",
        format!("tool-{i}").into(),
        SystemTime::now(),
    );
    r.outcome = [Outcome::Ok, Outcome::ToolError, Outcome::Denied][i % 3];
    r
}

fn lines(text: &str) -> Vec<Value> {
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a partial last line"
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_records_give_a_thousand_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = Arc::new(
        AuditLog::open(AuditTarget::File(path.clone()), ArgumentsMode::Off, 8192).unwrap(),
    );
    let tasks: Vec<_> = (0..1000)
        .map(|i| {
            let log = Arc::clone(&log);
            tokio::spawn(async move { log.record(record(i)) })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    log.flush().await;
    assert_eq!(log.dropped(), 0);
    assert_eq!(log.written(), 1000);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = lines(&text);
    assert_eq!(lines.len(), 1000);
    let names: HashSet<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 1000, "every record exactly once");
    for l in &lines {
        let i: usize = l["name"].as_str().unwrap()[5..].parse().unwrap();
        assert_eq!(l["client"], format!("client-{}", i % 3));
        assert_eq!(l["outcome"], ["ok", "tool_error", "denied"][i % 3]);
    }
}

#[tokio::test]
async fn a_failing_write_drops_and_counts_without_failing_the_caller() {
    // Every write to /dev/full fails with ENOSPC.
    let log = AuditLog::open(
        AuditTarget::File("/dev/full".into()),
        ArgumentsMode::Off,
        64,
    )
    .unwrap();
    for i in 0..10 {
        log.record(record(i));
    }
    log.flush().await;
    assert_eq!(log.dropped(), 10);
    assert_eq!(log.written(), 0);
}

#[test]
fn an_unopenable_file_is_an_error_naming_it() {
    let e = AuditLog::open(
        AuditTarget::File("/nonexistent-dir/audit.jsonl".into()),
        ArgumentsMode::Off,
        8,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("/nonexistent-dir/audit.jsonl"),
        "{e}"
    );
}

#[tokio::test]
async fn reopen_moves_writing_to_a_new_file_at_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let rotated = dir.path().join("audit.jsonl.1");
    let log = AuditLog::open(AuditTarget::File(path.clone()), ArgumentsMode::Off, 64).unwrap();
    log.record(record(1));
    log.flush().await;
    std::fs::rename(&path, &rotated).unwrap();
    log.record(record(2));
    log.flush().await;
    log.reopen();
    log.record(record(3));
    log.flush().await;
    let old = lines(&std::fs::read_to_string(&rotated).unwrap());
    let new = lines(&std::fs::read_to_string(&path).unwrap());
    let names = |v: &[Value]| {
        v.iter()
            .map(|l| l["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&old),
        ["tool-1", "tool-2"],
        "before the reopen: the moved file"
    );
    assert_eq!(names(&new), ["tool-3"]);
}

#[tokio::test]
async fn a_full_queue_drops_and_counts_and_never_blocks() {
    // A pipe nobody reads yet: the writer blocks once it is full, then the queue fills.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("audit.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut f = std::fs::File::open(reader_path).unwrap(); // waits for the writer to open
        go_rx.recv().unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        text
    });
    let log = AuditLog::open(AuditTarget::File(fifo), ArgumentsMode::Off, 16).unwrap();
    let total = 5000;
    for i in 0..total {
        log.record(record(i)); // must return at once even though nothing is read
    }
    let dropped = log.dropped();
    // A pipe holds 64 KiB (~300 lines), a batch 256, the queue 16: most are dropped.
    assert!(dropped >= 4000, "dropped {dropped}");
    go_tx.send(()).unwrap();
    log.flush().await;
    assert_eq!(
        log.dropped(),
        dropped,
        "nothing dropped once the reader drains"
    );
    let written = log.written();
    drop(log); // the writer ends and closes the pipe
    let text = reader.join().unwrap();
    let lines = lines(&text);
    assert_eq!(lines.len() as u64, written);
    assert_eq!(written + dropped, total as u64);
}
