//! Headless Chromium (Debian's `chromium`) on a page: its DOM, or a screenshot.

use std::path::Path;
use std::process::Stdio;

use super::{PATIENCE, debian_program};

/// Run headless Chromium with a fresh profile on `url` with `extra` flags; its stdout.
pub async fn chromium(url: &str, extra: &[String]) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let child = tokio::process::Command::new(debian_program("chromium"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start chromium");
    let output = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("chromium finished")
        .expect("chromium ran");
    assert!(
        output.status.success(),
        "chromium failed: {:?}",
        output.status
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The DOM Chromium builds from `url`.
pub async fn dom(url: &str) -> String {
    chromium(url, &["--dump-dom".to_string()]).await
}

/// A screenshot of `url` at `width`×`height` written to `png`; checked to be a PNG of that
/// size.
pub async fn screenshot(url: &str, png: &Path, width: u32, height: u32) {
    chromium(
        url,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={width},{height}"),
            "--hide-scrollbars".to_string(),
        ],
    )
    .await;
    let bytes = std::fs::read(png).expect("the screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let w = u32::from_be_bytes(bytes[16..20].try_into().expect("4 bytes"));
    let h = u32::from_be_bytes(bytes[20..24].try_into().expect("4 bytes"));
    assert_eq!((w, h), (width, height));
}

/// The table row of `server` on the status page (from its `<tr>` to its end).
pub fn row<'a>(dom: &'a str, server: &str) -> &'a str {
    let start = dom
        .find(&format!("data-server=\"{server}\""))
        .unwrap_or_else(|| panic!("no row for {server} in\n{dom}"));
    let rest = &dom[start..];
    &rest[..rest.find("</tr>").unwrap_or(rest.len())]
}
