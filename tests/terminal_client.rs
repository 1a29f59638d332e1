//! The `mrtr` terminal client end to end: in a pseudo-terminal answering a form field by
//! field, and without a TTY from an answers file, over stdio and HTTP.

// The `mrtr` binary lives in the `mrtr-cli` package; the servers it talks to are this
// package's test fixtures, so the end-to-end test lives here.
#[path = "support/bins.rs"]
mod bins;
#[path = "support/server.rs"]
mod server;

use std::{process::Command, time::Duration};

use expectrl::{Expect, Session};

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const BACKSPACE: &str = "\x7f";

fn mrtr() -> Command {
    Command::new(bins::terminal_client())
}

#[test]
fn interactive_form_is_answered_field_by_field_in_a_pty() {
    let mut command = mrtr();
    command
        .args(["stdio", "--call", "wizard", "--"])
        .arg(bins::test_server());
    let mut session = Session::spawn(command).expect("spawn mrtr in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(60)));

    // Round 1: fill in the form.
    session.expect("Describe the deployment").unwrap();
    session.send(ENTER).unwrap(); // "Answer"
    session.expect("Environment").unwrap();
    session.send(DOWN).unwrap();
    session.send(ENTER).unwrap(); // Production
    session.expect("Service name").unwrap();
    session.send("a").unwrap();
    session.send(ENTER).unwrap();
    session.expect("at least 2 characters").unwrap(); // rejected, asked again
    session.send("pi").unwrap();
    session.send(ENTER).unwrap();
    session.expect("Notify the team").unwrap();
    session.send("y").unwrap();
    session.send(ENTER).unwrap();
    session.expect("Regions").unwrap();
    session.send(" ").unwrap(); // tick "eu"
    session.send(ENTER).unwrap();
    session.expect("Replicas").unwrap();
    session.send("9").unwrap();
    session.send(ENTER).unwrap();
    session.expect("at most 5").unwrap();
    session.send(BACKSPACE).unwrap();
    session.send("4").unwrap();
    session.send(ENTER).unwrap();

    // Round 2: decline the confirmation.
    session.expect("Deploy api to production x4?").unwrap();
    session.send(DOWN).unwrap();
    session.send(ENTER).unwrap(); // "Decline"
    session
        .expect("not deployed: api to production x4")
        .unwrap();
    session.expect(expectrl::Eof).unwrap();
}

fn answers_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("mrtr-{}-{name}.json", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn scripted_answers_without_a_tty_print_the_transcript() {
    let answers = answers_file(
        "wizard",
        r#"{"byKey": {
            "service": {"action": "accept", "content": {"name": "api", "env": "staging", "replicas": 3}},
            "confirm": ["accept"]
        }}"#,
    );
    let output = mrtr()
        .args(["stdio", "--call", "wizard", "--answers"])
        .arg(&answers)
        .arg("--")
        .arg(bins::test_server())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The confirm form requires `ok`, so a bare "accept" is refused before anything is sent.
    assert!(!output.status.success(), "{stdout}");
    assert!(stderr.contains("`ok` is required"), "{stderr}");
    assert!(
        stdout
            .contains("── round 1: tools/call wizard → input_required (1 request(s), requestState"),
        "{stdout}"
    );
    assert!(stdout.contains(r#"! [service] {"action":"accept","content":{"env":"staging","name":"api","replicas":3}}"#), "{stdout}");

    let answers = answers_file(
        "wizard-ok",
        r#"{"byKey": {
            "service": {"action": "accept", "content": {"name": "api", "env": "staging", "replicas": 3}}
        }, "inOrder": [{"action": "accept", "content": {"ok": true}}]}"#,
    );
    let output = mrtr()
        .args(["stdio", "--call", "wizard", "--answers"])
        .arg(&answers)
        .arg("--")
        .arg(bins::test_server())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rounds: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("── round"))
        .collect();
    assert_eq!(rounds.len(), 2, "{stdout}");
    assert!(rounds[1].contains("round 2"), "{stdout}");
    assert!(
        stdout.contains("? [confirm] form: Deploy api to staging x3? [ok*]"),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"! [confirm] {"action":"accept","content":{"ok":true}}"#),
        "{stdout}"
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("── complete\ndeployed api to staging x3"),
        "{stdout}"
    );
}

#[tokio::test]
async fn scripted_url_consent_and_sampling_over_http() {
    let stop = tokio_util::sync::CancellationToken::new();
    let url = server::serve_http(server::TestServer::default(), stop.clone()).await;
    let answers = answers_file("consent", r#"{"byKey": {"consent": "accept"}}"#);
    let output = tokio::process::Command::new(bins::terminal_client())
        .args(["http", &url, "--read", "secret://doc", "--answers"])
        .arg(&answers)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("? [consent] url: Sign in to read the doc <https://example.com/consent>"),
        "{stdout}"
    );
    assert!(stdout.contains("the secret"), "{stdout}");

    let output = tokio::process::Command::new(bins::terminal_client())
        .args([
            "http",
            &url,
            "--call",
            "needs_sampling",
            "--sample-command",
            "wc -c | tr -d ' '",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The command received the request JSON on stdin and its output became the reply.
    let reply: usize = stdout
        .lines()
        .last()
        .unwrap()
        .parse()
        .expect("a byte count");
    assert!(reply > 20, "{stdout}");
    stop.cancel();
}

#[test]
fn url_consent_and_cancel_in_a_pty_over_http() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let url = runtime.block_on(server::serve_http(
        server::TestServer::default(),
        stop.clone(),
    ));

    // URL elicitation: the URL is shown and consent asked.
    let mut command = mrtr();
    command.args(["http", &url, "--read", "secret://doc"]);
    let mut session = Session::spawn(command).expect("spawn mrtr in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session.expect("https://example.com/consent").unwrap();
    session.expect("Open this URL").unwrap();
    session.send("y").unwrap();
    session.send(ENTER).unwrap();
    session.expect("the secret").unwrap();
    session.expect(expectrl::Eof).unwrap();

    // A form can be cancelled outright.
    let mut command = mrtr();
    command.args(["http", &url, "--prompt", "topic"]);
    let mut session = Session::spawn(command).expect("spawn mrtr in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session.expect("Which topic?").unwrap();
    session.send(DOWN).unwrap();
    session.send(DOWN).unwrap();
    session.send(ENTER).unwrap(); // "Cancel the call"
    session.expect(r#"! [topic] {"action":"cancel"}"#).unwrap();
    session.expect("Write about nothing").unwrap();
    session.expect(expectrl::Eof).unwrap();
    stop.cancel();
}

/// `--legacy`: a 2025-11-25 session over stdio; the server asks by sending requests
/// mid-call and the same answers file, roots and sampling reply answer them.
#[test]
fn legacy_sessions_are_answered_from_the_same_sources() {
    let answers = answers_file(
        "legacy-tally",
        r#"{"inOrder": [
            {"action": "accept", "content": {"text": "Ada"}},
            {"action": "accept", "content": {"confirm": true}}
        ]}"#,
    );
    let root = std::env::temp_dir();
    let output = mrtr()
        .args([
            "stdio",
            "--legacy",
            "--call",
            "tally",
            "--args",
            r#"{"label": "votes"}"#,
        ])
        .args(["--sample-reply", "kind", "--answers"])
        .arg(&answers)
        .arg("--root")
        .arg(&root)
        .arg("--")
        .arg(bins::example("legacy_test_server"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // Code between suspensions ran once each in a fresh server process.
    assert!(
        stdout.contains("votes for Ada: 1 root(s), note `kind` | runs 1/1/1"),
        "{stdout}"
    );
    // No MRTR rounds on a legacy session.
    assert!(!stdout.contains("input_required"), "{stdout}");
}

#[test]
/// The demo's own answers file drives the showcase's deploy wizard.
fn the_mrtr_client_drives_the_showcase_over_stdio_from_the_demo_script() {
    let output = mrtr()
        .args([
            "stdio",
            "--call",
            "deploy_wizard",
            "--args",
            r#"{"service":"web"}"#,
        ])
        .arg("--answers")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/demo/answers.json"
        ))
        .arg("--")
        .arg(bins::example("showcase"))
        .arg("serve-stdio")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run mrtr");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rounds = stdout
        .lines()
        .filter(|line| line.contains("→ input_required") && line.contains("requestState "))
        .count();
    assert_eq!(rounds, 5, "{stdout}");
    assert!(stdout.contains("? [confirm] form: Deploy web to PRODUCTION?"));
    assert!(
        stdout
            .ends_with("── complete\nDeploying web 1.4.2 to production (3 version attempt(s)).\n")
    );
}
