//! `cargo run --example demo` end to end: the built demo binary answered by a person in a
//! pseudo-terminal, and without a TTY running its committed script and printing the transcript.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use expectrl::{Expect, process::unix::WaitStatus, session::OsSession as Session};

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const ESC: &str = "\x1b";

#[path = "support/bins.rs"]
mod bins;

/// `target/debug/examples/demo`, rebuilt once per test run if stale.
fn demo_binary() -> PathBuf {
    bins::example("demo")
}

/// Runs the demo without a TTY; asserts it exits with `code` (2 when the script declines
/// a question) and says nothing about keys (it seals with a key it generates).
fn scripted_run_exiting(code: i32, args: &[&str]) -> String {
    let output = Command::new(demo_binary())
        .args(args)
        .env_remove("MRTR_KEYS")
        .stdin(Stdio::null())
        .output()
        .expect("run the demo");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "demo: {stdout}\n{stderr}");
    assert!(!stderr.contains("MRTR_KEYS"), "{stderr}");
    stdout
}

fn scripted_run(args: &[&str]) -> String {
    scripted_run_exiting(0, args)
}

/// Waits for the demo to end and returns its exit code.
fn exit_code(session: &mut Session) -> i32 {
    session.expect(expectrl::Eof).unwrap();
    match session.get_process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("the demo did not exit normally: {other:?}"),
    }
}

/// The `requestState N bytes` figures of a transcript, in order.
fn state_sizes(transcript: &str) -> Vec<usize> {
    transcript
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once("requestState ")?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .collect()
}

#[test]
fn without_a_tty_the_demo_runs_the_scripted_deploy_wizard() {
    let transcript = scripted_run(&[]);
    assert!(transcript.contains("answers from: examples/demo/answers.json (no TTY)"));
    assert!(transcript.contains("calling tools/call deploy_wizard {\"service\":\"api\"}"));
    let rounds: Vec<&str> = transcript
        .lines()
        .filter(|line| line.starts_with("── round"))
        .collect();
    assert_eq!(rounds.len(), 5, "{transcript}");
    assert!(
        rounds
            .iter()
            .all(|line| line.contains("input_required (1 request(s)"))
    );
    assert!(transcript.contains("? [environment] form: Where should api go? [choice*]"));
    assert!(transcript.contains(
        "? [confirm] form: Deploy api to PRODUCTION? Live users will be affected. [confirm*]"
    ));
    assert!(transcript.contains(r#"! [version] {"action":"accept","content":{"text":"1.4"}}"#));
    assert!(
        transcript.contains("? [version] form: `1.4` is not a version: expected three numbers")
    );
    assert!(transcript.contains(
        "? [version] form: `1.04.2` is not a version: the minor number `04` has a leading zero"
    ));
    let sizes = state_sizes(&transcript);
    assert_eq!(sizes.len(), 5);
    assert!(sizes.iter().all(|size| *size > 0));
    assert!(
        transcript
            .ends_with("── complete\nDeploying api 1.4.2 to production (3 version attempt(s)).\n"),
        "{transcript}"
    );
}

#[test]
fn without_a_tty_every_other_flow_finishes_from_the_script() {
    let order = scripted_run(&["--flow", "order"]);
    assert!(order.contains(
        "Order placed for table four: 2 × pad thai, 1 × tiramisu — total 27.50. Kitchen note: Two pad thai"
    ), "{order}");
    assert!(order.contains("sampling: 1 message(s), maxTokens 80"));

    // The script declines the proposed moves: the flow finishes, and the exit code says a
    // question was declined.
    let organise = scripted_run_exiting(2, &["--flow", "organise"]);
    assert!(organise.contains("roots/list"), "{organise}");
    assert!(organise.contains("4 file(s) could be tidied"), "{organise}");
    assert!(organise.ends_with("── complete\nNo moves approved; nothing changes.\n"));

    let explain = scripted_run(&["--flow", "explain"]);
    assert!(
        explain.contains("Explain request state sealing to a curious beginner. Give an overview")
    );

    let vault = scripted_run(&["--flow", "vault"]);
    assert!(
        vault.contains(
            "url: Approve access to the team key index in your browser. <http://127.0.0.1:"
        ),
        "{vault}"
    );
    assert!(vault.contains("/approve?request="), "{vault}");
    assert!(vault.contains("deploy-key"), "{vault}");
}

#[test]
fn a_person_answers_the_deploy_wizard_in_a_pty() {
    let mut session = Session::spawn(Command::new(demo_binary())).expect("spawn the demo in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session
        .expect("answers from: you, at this terminal")
        .unwrap();

    // One keystroke sequence per question, no menu before it.
    // Round 1: pick production.
    session.expect("Where should api go?").unwrap();
    session.expect("staging").unwrap();
    session.send(DOWN).unwrap();
    session.send(ENTER).unwrap();

    // Round 2: the confirmation names production.
    session.expect("Deploy api to PRODUCTION?").unwrap();
    session.expect("y/N").unwrap();
    session.send("y").unwrap();
    session.send(ENTER).unwrap();

    // Rounds 3 and 4: an invalid version is asked again with the reason.
    session.expect("Which version of api?").unwrap();
    session.expect("Esc declines").unwrap();
    session.send("2.x").unwrap();
    session.send(ENTER).unwrap();
    session.expect("`2.x` is not a version").unwrap();
    session.expect("Esc declines").unwrap();
    session.send("2.1.0").unwrap();
    session.send(ENTER).unwrap();

    session
        .expect("Deploying api 2.1.0 to production (2 version attempt(s)).")
        .unwrap();
    assert_eq!(exit_code(&mut session), 0);
}

#[test]
fn declining_in_the_pty_ends_the_flow_early() {
    let mut session = Session::spawn(Command::new(demo_binary())).expect("spawn the demo in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session.expect("Where should api go?").unwrap();
    session.expect("staging").unwrap();
    session.send(ENTER).unwrap(); // staging
    session.expect("Deploy api to staging?").unwrap();
    session.expect("y/N").unwrap();
    session.send(ESC).unwrap(); // decline
    session
        .expect("Deployment of api to staging called off.")
        .unwrap();
    assert_eq!(exit_code(&mut session), 2);
}
