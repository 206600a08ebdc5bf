//! `pegboard-mcp`: the `pegboard` binary under the name of its packages.
//!
//! `uvx pegboard-mcp serve` runs the executable named like the package, so the wheel must hold
//! one called `pegboard-mcp`. A second copy of the gateway would double the wheel (wheels are
//! zip files: no links) and, under the `dist` profile's one-unit LTO, the link time. This is a
//! few hundred kB that runs the `pegboard` installed beside it with the same arguments: on Unix
//! it replaces itself with it (`exec`), so stdio, signals and the exit code are the gateway's own.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// Exit code when `pegboard` cannot be started (what shells use for "command not found").
const NOT_FOUND: i32 = 127;

fn main() {
    let target = match gateway_beside_me() {
        Ok(path) => path,
        Err(why) => fail(&why),
    };
    let mut command = Command::new(&target);
    command.args(std::env::args_os().skip(1));
    let error = run(command);
    fail(&format!(
        "cannot start {}: {error}. pegboard-mcp runs the `pegboard` binary installed beside it; \
         reinstall the package (pip, uv or pipx: pegboard-mcp), or run `pegboard` directly",
        target.display()
    ));
}

/// The `pegboard` executable in the directory this launcher runs from.
fn gateway_beside_me() -> Result<PathBuf, String> {
    let me = std::env::current_exe()
        .map_err(|e| format!("cannot find where pegboard-mcp is installed: {e}"))?;
    let dir = me.parent().ok_or_else(|| {
        format!(
            "cannot find the directory of {}: run `pegboard` directly",
            me.display()
        )
    })?;
    Ok(dir.join(format!("pegboard{}", std::env::consts::EXE_SUFFIX)))
}

/// Replaces this process with `command`; returns only when that fails.
#[cfg(unix)]
fn run(mut command: Command) -> std::io::Error {
    use std::os::unix::process::CommandExt as _;
    command.exec()
}

/// Runs `command` to its end with this process's stdio and exits with its code (Windows has no
/// `exec`; Ctrl-C reaches both processes of the console).
#[cfg(not(unix))]
fn run(mut command: Command) -> std::io::Error {
    match command.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => e,
    }
}

/// Prints `message` on stderr (stdout may be an MCP client's channel) and exits.
fn fail(message: &str) -> ! {
    // Not `eprintln!`: with stderr closed it would panic and hide the exit code.
    let _ = writeln!(std::io::stderr(), "error: {message}");
    std::process::exit(NOT_FOUND);
}
