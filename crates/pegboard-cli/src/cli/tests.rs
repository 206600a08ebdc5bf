//! The command line as clap reads it.

use super::*;
use clap::CommandFactory;

#[test]
fn cli_definition_is_valid() {
    Cli::command().debug_assert();
}

#[test]
fn addresses_default_to_loopback() {
    assert_eq!(
        parse_addr("8700"),
        Ok(SocketAddr::from(([127, 0, 0, 1], 8700)))
    );
    assert_eq!(
        parse_addr(":8700"),
        Ok(SocketAddr::from(([127, 0, 0, 1], 8700)))
    );
    assert_eq!(
        parse_addr("localhost:1"),
        Ok(SocketAddr::from(([127, 0, 0, 1], 1)))
    );
    assert_eq!(
        parse_addr("0.0.0.0:2"),
        Ok(SocketAddr::from(([0, 0, 0, 0], 2)))
    );
    assert!(parse_addr("[::1]:3").is_ok());
    assert!(parse_addr("nope").is_err());
}

#[test]
fn call_takes_tool_and_arguments() -> Result<(), clap::Error> {
    let cli = Cli::try_parse_from(["pegboard", "call", "a-b", "{}", "--json", "-c", "x.json"])?;
    let Command::Call(args) = cli.command else {
        panic!("call expected")
    };
    assert_eq!(args.tool, "a-b");
    assert_eq!(args.arguments.as_deref(), Some("{}"));
    assert!(args.json);
    assert_eq!(args.config.config, Some(PathBuf::from("x.json")));
    Ok(())
}

#[test]
fn pin_takes_accept_with_a_name_or_all() -> Result<(), clap::Error> {
    let pin = |extra: &[&str]| -> Result<PinArgs, clap::Error> {
        let cli = Cli::try_parse_from([&["pegboard", "pin"], extra].concat())?;
        let Command::Pin(args) = cli.command else {
            panic!("pin expected")
        };
        Ok(args)
    };
    assert_eq!(
        pin(&["--accept", "notes-add"])?.accept,
        Some(Some("notes-add".into()))
    );
    let all = pin(&["--accept", "--all"])?;
    assert_eq!((all.accept, all.all), (Some(None), true));
    assert!(pin(&["--diff", "--accept", "x"]).is_err());
    assert_eq!(
        pin(&["--lock", "x.lock"])?.lock,
        Some(PathBuf::from("x.lock"))
    );
    Ok(())
}

#[test]
fn metrics_takes_an_address_and_status_a_url() -> Result<(), clap::Error> {
    let cli = Cli::try_parse_from(["pegboard", "serve", "--metrics", "9464"])?;
    let Command::Serve(args) = cli.command else {
        panic!("serve expected")
    };
    assert_eq!(args.metrics, Some(SocketAddr::from(([127, 0, 0, 1], 9464))));
    let cli = Cli::try_parse_from(["pegboard", "status"])?;
    let Command::Status(args) = cli.command else {
        panic!("status expected")
    };
    assert_eq!(args.metrics_url, "http://127.0.0.1:9464");
    assert!(Cli::try_parse_from(["pegboard", "serve", "--metrics", "nope"]).is_err());
    Ok(())
}

#[test]
fn wait_defaults_to_the_engines_grace_period_and_takes_zero() -> Result<(), clap::Error> {
    let serve = |extra: &[&str]| -> Result<ServeArgs, clap::Error> {
        let cli = Cli::try_parse_from([&["pegboard", "serve"], extra].concat())?;
        let Command::Serve(args) = cli.command else {
            panic!("serve expected")
        };
        Ok(*args)
    };
    assert_eq!(serve(&[])?.wait, pegboard_gateway::DEFAULT_WAIT);
    assert_eq!(serve(&["--wait", "0"])?.wait, Duration::ZERO);
    assert_eq!(serve(&["--wait", "2.5"])?.wait, Duration::from_millis(2500));
    assert!(serve(&["--wait", "-1"]).is_err());
    Ok(())
}

fn serve(extra: &[&str]) -> Result<ServeArgs, clap::Error> {
    let cli = Cli::try_parse_from([&["pegboard", "serve"], extra].concat())?;
    let Command::Serve(args) = cli.command else {
        panic!("serve expected")
    };
    Ok(*args)
}

#[test]
fn audit_flags_parse_and_arguments_need_a_log() -> Result<(), clap::Error> {
    use pegboard_gateway::audit::{ArgumentsMode, AuditTarget};
    let args = serve(&[
        "--audit-log",
        "/var/log/pb.jsonl",
        "--audit-arguments",
        "hash",
    ])?;
    assert_eq!(
        args.audit_log,
        Some(AuditTarget::File("/var/log/pb.jsonl".into()))
    );
    assert_eq!(args.audit_arguments_mode(), ArgumentsMode::Hash);
    assert_eq!(
        serve(&["--audit-log", "-"])?.audit_log,
        Some(AuditTarget::Stderr)
    );
    assert_eq!(serve(&[])?.audit_arguments_mode(), ArgumentsMode::Off);
    assert!(serve(&["--audit-arguments", "full"]).is_err());
    assert!(serve(&["--audit-log", ""]).is_err());
    assert!(serve(&["--audit-log", "-", "--audit-arguments", "all"]).is_err());
    Ok(())
}

#[test]
fn client_is_for_stdio() -> Result<(), clap::Error> {
    assert_eq!(
        serve(&["--client", "ci-bot"])?.client.as_deref(),
        Some("ci-bot")
    );
    assert!(serve(&["--client", "ci-bot", "--http", "8700"]).is_err());
    Ok(())
}
