//! `pegboard-mcp`, the launcher the packages install beside `pegboard` (the name `uvx
//! pegboard-mcp` runs): it runs the `pegboard` beside it with the same arguments, stdio and exit
//! code, and says what is wrong when there is none.

use std::process::{Command, Stdio};

fn launcher() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pegboard-mcp"))
}

#[test]
fn runs_the_pegboard_beside_it_with_its_arguments_and_stdout() {
    let direct = Command::new(env!("CARGO_BIN_EXE_pegboard"))
        .arg("--version")
        .output()
        .unwrap();
    let launched = launcher().arg("--version").output().unwrap();
    assert!(launched.status.success(), "{launched:?}");
    assert_eq!(launched.stdout, direct.stdout);
    assert!(String::from_utf8_lossy(&launched.stdout).starts_with("pegboard "));
}

#[test]
fn passes_the_exit_code_through() {
    // clap's code for an unknown subcommand is 2: neither 0 nor the launcher's own 127.
    let out = launcher()
        .arg("no-such-subcommand")
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-subcommand"));
}

#[test]
fn without_pegboard_beside_it_says_so_on_stderr_and_exits_127() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir
        .path()
        .join(format!("pegboard-mcp{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(env!("CARGO_BIN_EXE_pegboard-mcp"), &alone).unwrap();
    let out = Command::new(&alone).arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "stdout belongs to the protocol: {out:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot start") && stderr.contains("reinstall the package"),
        "{stderr}"
    );
}
