//! `pegboard-load relay`: the floor of a stdio hop. The least a gateway process can do: forward
//! each line to the backend and each answer back, on two plain threads with blocking pipes,
//! renaming `b-<tool>` to `<tool>` on the way in. With `--parse`, each message is also parsed
//! into a `serde_json::Value` and written out again, as a gateway that rebuilds messages would.
//!
//! Not a gateway (one client, ids passed through unchanged): a yardstick for the harness.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

use crate::gateway::NAMESPACE;

/// Rename the tool of a `tools/call` by bytes: the first `"name":"b-` loses its prefix.
pub(crate) fn rename_raw(line: &[u8]) -> Vec<u8> {
    let needle = format!("\"name\":\"{NAMESPACE}-");
    let needle = needle.as_bytes();
    match line.windows(needle.len()).position(|w| w == needle) {
        Some(at) => {
            let keep = at + needle.len() - NAMESPACE.len() - 1;
            let mut out = Vec::with_capacity(line.len());
            out.extend_from_slice(&line[..keep]);
            out.extend_from_slice(&line[at + needle.len()..]);
            out
        }
        None => line.to_vec(),
    }
}

/// Parse, rename the tool (when there is one) and serialise again.
fn rename_parsed(line: &[u8]) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(line) else {
        return line.to_vec();
    };
    if let Some(name) = value.pointer_mut("/params/name")
        && let Some(s) = name.as_str()
        && let Some(rest) = s.strip_prefix(&format!("{NAMESPACE}-"))
    {
        *name = serde_json::Value::String(rest.to_owned());
    }
    serde_json::to_vec(&value).unwrap_or_else(|_| line.to_vec())
}

fn reserialise(line: &[u8]) -> Vec<u8> {
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| serde_json::to_vec(&v).ok())
        .unwrap_or_else(|| line.to_vec())
}

/// Copy lines from `from` to `to`, each through `map`, flushing after each line.
fn pump(
    from: impl std::io::Read,
    to: impl std::io::Write,
    map: impl Fn(&[u8]) -> Vec<u8>,
) -> std::io::Result<()> {
    let mut from = BufReader::with_capacity(64 * 1024, from);
    let mut to = BufWriter::with_capacity(64 * 1024, to);
    let mut line = Vec::with_capacity(64 * 1024);
    loop {
        line.clear();
        if from.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        to.write_all(&map(body))?;
        to.write_all(b"\n")?;
        // Only flush once no further whole line is waiting: answers that arrived together leave together.
        if !from.buffer().contains(&b'\n') {
            to.flush()?;
        }
    }
}

/// Run the relay in front of `backend` (an argv) until stdin closes.
pub fn run(backend: &[String], parse: bool) -> Result<()> {
    let (program, args) = backend.split_first().context("relay: no backend command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("relay: cannot start {program}"))?;
    let child_in = child.stdin.take().context("no stdin pipe")?;
    let child_out = child.stdout.take().context("no stdout pipe")?;
    let back = std::thread::spawn(move || {
        let map = if parse { reserialise } else { <[u8]>::to_vec };
        pump(child_out, std::io::stdout().lock(), map)
    });
    let map = if parse { rename_parsed } else { rename_raw };
    pump(std::io::stdin().lock(), child_in, map)?;
    // stdin closed: the child's stdin is dropped with the pump, so it exits; then so does `back`.
    let _ = child.wait();
    let _ = back.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_the_namespaced_tool_both_ways() {
        let line =
            br#"{"method":"tools/call","params":{"name":"b-echo","arguments":{"x":"b-"}},"id":3}"#;
        let want =
            br#"{"method":"tools/call","params":{"name":"echo","arguments":{"x":"b-"}},"id":3}"#;
        assert_eq!(rename_raw(line), want.to_vec());
        let parsed: serde_json::Value = serde_json::from_slice(&rename_parsed(line)).unwrap();
        assert_eq!(parsed["params"]["name"], "echo");
        assert_eq!(parsed["params"]["arguments"]["x"], "b-");
        assert_eq!(rename_raw(b"{\"id\":1}"), b"{\"id\":1}".to_vec());
    }
}
