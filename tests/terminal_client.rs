//! The `mrtr` terminal client end to end: in a pseudo-terminal (one prompt per question,
//! Esc declines, Ctrl-C cancels the call and a running task), and without a TTY from an
//! answers file, over stdio and HTTP; every exit code it documents.

// The `mrtr` binary lives in the `mrtr-cli` package; the servers it talks to are this
// package's test fixtures, so the end-to-end test lives here.
#[path = "support/bins.rs"]
mod bins;
#[path = "support/server.rs"]
mod server;

use std::{process::Command, time::Duration};

use expectrl::{Expect, process::unix::WaitStatus, session::OsSession as Session};

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const BACKSPACE: &str = "\x7f";
const ESC: &str = "\x1b";
const CTRL_C: &str = "\x03";

fn mrtr() -> Command {
    Command::new(bins::terminal_client())
}

/// `mrtr` in a pseudo-terminal.
fn pty(command: Command) -> Session {
    let mut session = Session::spawn(command).expect("spawn mrtr in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session
}

/// Everything the screen showed, in order, as the test waits for each piece.
#[derive(Default)]
struct Screen(String);

impl Screen {
    /// Waits for `text` and records what came before it and the text itself.
    fn expect(&mut self, session: &mut Session, text: &str) {
        let found = session.expect(text).unwrap_or_else(|error| {
            panic!("waiting for {text:?}: {error}\nscreen so far:\n{}", self.0)
        });
        self.0.push_str(&String::from_utf8_lossy(found.before()));
        self.0.push_str(text);
    }
}

/// One field of a form and how the person answers it.
type Answer<'a> = (&'a str, &'a dyn Fn(&mut Session, &mut Screen));

/// Answers a form's fields in whatever order the prompts come (each found by its title),
/// one keystroke sequence per field; returns the titles in the order they were asked.
fn answer_fields(session: &mut Session, screen: &mut Screen, fields: &[Answer]) -> Vec<String> {
    let mut asked = Vec::new();
    while asked.len() < fields.len() {
        let pattern = fields
            .iter()
            .filter(|(title, _)| !asked.iter().any(|a| a == title))
            .map(|(title, _)| regex_escape(title))
            .collect::<Vec<_>>()
            .join("|");
        let found = session
            .expect(expectrl::Regex(pattern))
            .unwrap_or_else(|error| panic!("waiting for a field: {error}\n{}", screen.0));
        let title = String::from_utf8_lossy(found.get(0).unwrap_or_default()).into_owned();
        screen.0.push_str(&String::from_utf8_lossy(found.before()));
        screen.0.push_str(&title);
        let (_, answer) = fields.iter().find(|(t, _)| *t == title).unwrap();
        answer(session, screen);
        asked.push(title);
    }
    asked
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '?' | '(' | ')' | '.' | '*' | '+' | '[' | ']' | '|' | '\\' | '^' | '$' | '{' | '}' => {
                vec!['\\', c]
            }
            c => vec![c],
        })
        .collect()
}

/// Sends `keys` one after another.
fn keys(session: &mut Session, keys: &[&str]) {
    for key in keys {
        session.send(key).unwrap();
    }
}

/// The fields of question `key` in the order the server lists them, from the
/// `--verbose` transcript of a scripted run (`? [key] form: ... [a*, b, c]`).
fn fields_on_the_wire(command: &mut Command, key: &str) -> Vec<String> {
    let (_, stdout, stderr) = run(command);
    let marker = format!("? [{key}] form:");
    let line = stdout
        .lines()
        .find(|line| line.contains(&marker))
        .unwrap_or_else(|| panic!("no {key} question: {stdout}\n{stderr}"));
    let fields = &line[line.rfind('[').unwrap() + 1..line.len() - 1];
    fields
        .split(", ")
        .map(|field| field.trim_end_matches('*').to_owned())
        .collect()
}

/// Waits for the process to end and returns its exit code.
fn exit_code(session: &mut Session) -> i32 {
    session.expect(expectrl::Eof).unwrap();
    match session.get_process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("mrtr did not exit normally: {other:?}"),
    }
}

#[test]
fn interactive_form_is_answered_field_by_field_in_a_pty() {
    let mut command = mrtr();
    command
        .args(["call", "wizard", "--"])
        .arg(bins::test_server());
    let mut session = pty(command);
    let mut screen = Screen::default();

    // Round 1: the form's message once, then one prompt per field, in the order the server
    // lists them.
    screen.expect(&mut session, "Describe the deployment");
    let asked = answer_fields(
        &mut session,
        &mut screen,
        &[
            ("Environment", &|s, _| keys(s, &[DOWN, ENTER])), // Production
            ("Service name", &|s, screen| {
                keys(s, &["a", ENTER]);
                screen.expect(s, "at least 2 characters"); // rejected, asked again
                keys(s, &["pi", ENTER]);
            }),
            ("Notify the team", &|s, _| keys(s, &["y", ENTER])),
            ("Regions", &|s, _| keys(s, &[" ", ENTER])), // tick "eu"
            ("Replicas", &|s, screen| {
                screen.expect(s, "from 1 to 5"); // the bounds are shown
                keys(s, &["9", ENTER]);
                screen.expect(s, "at most 5");
                keys(s, &[BACKSPACE, "4", ENTER]);
            }),
        ],
    );

    // Round 2: a one-field question is one prompt, worded as the server asked; Esc declines.
    screen.expect(&mut session, "Deploy api to production x4?");
    session.send(ESC).unwrap();
    screen.expect(&mut session, "not deployed: api to production x4");
    assert_eq!(exit_code(&mut session), 2, "a declined question exits 2");

    // No menu before a question, the message printed once, no protocol detail.
    let shown = &screen.0;
    assert_eq!(
        shown.matches("Describe the deployment").count(),
        1,
        "{shown}"
    );
    for detail in [
        "Decline",
        "Cancel the call",
        "requestState",
        "\"action\"",
        "── round",
    ] {
        assert!(!shown.contains(detail), "{detail:?} shown:\n{shown}");
    }
    let mut scripted = mrtr();
    scripted
        .args(["call", "wizard", "--verbose", "--answers"])
        .arg(answers_file("none", "{}"))
        .arg("--")
        .arg(bins::test_server());
    let title = |field: &str| match field {
        "env" => "Environment",
        "name" => "Service name",
        "notify" => "Notify the team",
        "regions" => "Regions",
        "replicas" => "Replicas",
        other => panic!("unexpected field {other}"),
    };
    let wire: Vec<&str> = fields_on_the_wire(&mut scripted, "service")
        .iter()
        .map(|field| title(field))
        .collect();
    assert_eq!(asked, wire, "asked in the server's order");
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
        .args(["stdio", "--verbose", "--call", "wizard", "--answers"])
        .arg(&answers)
        .arg("--")
        .arg(bins::test_server())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The confirm form requires `ok`, so a bare "accept" is refused before anything is sent.
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(stderr.contains("`ok` is required"), "{stderr}");
    assert!(
        stdout
            .contains("── round 1: tools/call wizard → input_required (1 request(s), requestState"),
        "{stdout}"
    );
    // The answer goes out as the answers file wrote it (JSON objects keep their order).
    assert!(stdout.contains(r#"! [service] {"action":"accept","content":{"name":"api","env":"staging","replicas":3}}"#), "{stdout}");

    let answers = answers_file(
        "wizard-ok",
        r#"{"byKey": {
            "service": {"action": "accept", "content": {"name": "api", "env": "staging", "replicas": 3}}
        }, "inOrder": [{"action": "accept", "content": {"ok": true}}]}"#,
    );
    let output = mrtr()
        .args(["stdio", "--verbose", "--call", "wizard", "--answers"])
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
        .args([
            "http",
            &url,
            "--verbose",
            "--read",
            "secret://doc",
            "--answers",
        ])
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
fn url_consent_and_decline_in_a_pty_over_http() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let url = runtime.block_on(server::serve_http(
        server::TestServer::default(),
        stop.clone(),
    ));

    // URL elicitation: the URL is shown and consent asked; Enter says yes.
    let mut command = mrtr();
    command.args(["read", "secret://doc", "--url", &url]);
    let mut session = pty(command);
    session.expect("https://example.com/consent").unwrap();
    session.expect("Open this URL and continue?").unwrap();
    session.send(ENTER).unwrap();
    session.expect("the secret").unwrap();
    assert_eq!(exit_code(&mut session), 0);

    // Esc declines a question: the prompt goes on without a topic, and the exit code says so.
    let mut command = mrtr();
    command.args(["prompt", "topic", "--url", &url]);
    let mut session = pty(command);
    session.expect("Which topic?").unwrap();
    session.send(ESC).unwrap();
    session.expect("user: Write about nothing").unwrap();
    assert_eq!(exit_code(&mut session), 2);
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
            "--verbose",
            "--call",
            "deploy_wizard",
            "--args",
            r#"{"service":"web"}"#,
        ])
        .arg("--answers")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/demo/answers.json"
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

/// `mrtr` on the showcase over stdio.
fn on_showcase(args: &[&str]) -> Command {
    let mut command = mrtr();
    command
        .args(args)
        .arg("--")
        .arg(bins::example("showcase"))
        .arg("serve-stdio");
    command
}

/// The showcase's order flow at a terminal: one keystroke sequence per question, the dish
/// form's fields asked by their titles in the order the server lists them (the order the
/// form declares them, once the server sends that order), and the kitchen note (sampling)
/// typed in by the person, since a terminal offers sampling by default.
#[test]
fn the_order_flow_is_one_prompt_per_question_in_a_pty() {
    let mut session = pty(on_showcase(&[
        "call",
        "order_food",
        "--args",
        r#"{"customer": "table four"}"#,
    ]));
    let mut screen = Screen::default();
    let mut asked = Vec::new();
    for (message, dish, quantity, more) in [
        ("What would table four like?", &[DOWN, ENTER][..], "2", "y"), // pad thai
        (
            "So far: 2 × pad thai. What else?",
            &[DOWN, DOWN, DOWN, ENTER][..],
            "1",
            "n",
        ), // tiramisu
    ] {
        screen.expect(&mut session, message);
        asked = answer_fields(
            &mut session,
            &mut screen,
            &[
                ("Dish", &|s, screen| {
                    screen.expect(s, "Tiramisu (5.50)"); // the choices, as a list
                    keys(s, dish);
                }),
                ("How many", &|s, screen| {
                    screen.expect(s, "from 1 to 20"); // the bounds are shown
                    keys(s, &[quantity, ENTER]);
                }),
                ("Add another dish after this one?", &|s, _| {
                    keys(s, &[more, ENTER])
                }),
            ],
        );
    }
    screen.expect(
        &mut session,
        "Place the order 2 × pad thai, 1 × tiramisu for 27.50?",
    );
    keys(&mut session, &["y", ENTER]);
    screen.expect(&mut session, "You write short, friendly kitchen tickets.");
    screen.expect(&mut session, "Your reply");
    keys(&mut session, &["Two pad thai and a tiramisu", ENTER]);
    screen.expect(
        &mut session,
        "Order placed for table four: 2 × pad thai, 1 × tiramisu — total 27.50. Kitchen note: Two pad thai and a tiramisu",
    );
    assert_eq!(exit_code(&mut session), 0);
    assert!(!screen.0.contains("MRTR_KEYS"), "{}", screen.0);

    let answers = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo/answers.json");
    let mut scripted = on_showcase(&[
        "call",
        "order_food",
        "--verbose",
        "--sample-reply",
        "ok",
        "--answers",
        answers,
        "--args",
        r#"{"customer": "t"}"#,
    ]);
    let title = |field: &str| match field {
        "dish" => "Dish",
        "quantity" => "How many",
        "more" => "Add another dish after this one?",
        other => panic!("unexpected field {other}"),
    };
    let wire: Vec<&str> = fields_on_the_wire(&mut scripted, "dish")
        .iter()
        .map(|field| title(field))
        .collect();
    assert_eq!(asked, wire, "asked in the server's order");
    // ...which is the order `OrderLine` declares its fields in.
    assert_eq!(
        asked,
        ["Dish", "How many", "Add another dish after this one?"],
        "asked in declaration order"
    );
}

/// Ctrl-C while a task asks cancels the call: the client sends `tasks/cancel`, the server
/// reports the task cancelled, and the exit code is 2.
#[test]
fn ctrl_c_during_a_task_cancels_the_task_on_the_server() {
    let mut session = pty(on_showcase(&[
        "call",
        "export_dataset",
        "--args",
        r#"{"account": "acme"}"#,
    ]));
    session
        .expect("Which dataset of acme should be exported?")
        .unwrap();
    session.send(ENTER).unwrap(); // orders
    session
        .expect("continues this call in the background (task ")
        .unwrap();
    session
        .expect("12480 orders rows found. Include archived ones?")
        .unwrap();
    session.send(CTRL_C).unwrap();
    session.expect("the server reports task ").unwrap();
    session.expect(": cancelled").unwrap();
    assert_eq!(exit_code(&mut session), 2);
}

fn run(command: &mut Command) -> (Option<i32>, String, String) {
    let output = command
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run mrtr");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// 0 done, 1 the tool reported an error, 2 declined, 3 protocol or connection error, 64 a
/// flag missing: each documented exit code, without a terminal.
#[test]
fn exit_codes_are_as_documented() {
    let (code, stdout, stderr) = run(mrtr()
        .args(["call", "plain", "--"])
        .arg(bins::test_server()));
    assert_eq!((code, stdout.as_str()), (Some(0), "plain-ok\n"), "{stderr}");

    let (code, _, stderr) = run(mrtr()
        .args(["call", "no_such_tool", "--"])
        .arg(bins::test_server()));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the server refused: no tool no_such_tool"),
        "{stderr}"
    );

    let declined = answers_file("declined", r#"{"byKey": {"topic": "decline"}}"#);
    let (code, stdout, stderr) = run(mrtr()
        .args(["prompt", "topic", "--answers"])
        .arg(&declined)
        .arg("--")
        .arg(bins::test_server()));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.contains("Write about nothing"), "{stdout}");

    let (code, _, stderr) = run(mrtr().args(["tools", "--url", "http://127.0.0.1:9/mcp"]));
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("could not connect to the server: connection refused"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("::") && !stderr.contains("Error {"),
        "{stderr}"
    );

    // Sampling is not offered without a terminal or a --sample-* flag, and tools/list says
    // the tool needs it: refused before the call, naming the flag.
    let (code, _, stderr) = run(&mut on_showcase(&[
        "call",
        "order_food",
        "--args",
        r#"{"customer": "x"}"#,
    ]));
    assert_eq!(code, Some(64), "{stderr}");
    assert!(stderr.contains("may ask for sampling"), "{stderr}");
    assert!(stderr.contains("--sample-reply"), "{stderr}");

    let (code, _, stderr) = run(mrtr().args(["call"]));
    assert_eq!(code, Some(64), "{stderr}");
}

/// `mrtr tools`, `prompts` and `resources` list arguments, what each may ask for, and the
/// resource templates; a server the CLI starts says nothing about keys.
#[test]
fn listings_show_arguments_and_templates() {
    let (code, stdout, stderr) = run(&mut on_showcase(&["tools"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("order_food\n    Take a food order"),
        "{stdout}"
    );
    assert!(
        stdout.contains("--args customer: string (required) — Who the order is for."),
        "{stdout}"
    );
    assert!(
        stdout.contains("asks for: elicitation.form, sampling"),
        "{stdout}"
    );
    assert!(!stderr.contains("MRTR_KEYS"), "{stderr}");

    let (code, stdout, _) = run(&mut on_showcase(&["prompts"]));
    assert_eq!(code, Some(0));
    assert!(stdout.contains("explain\n"), "{stdout}");
    assert!(stdout.contains("--args audience (optional)"), "{stdout}");

    let (code, stdout, _) = run(mrtr().args(["resources", "--"]).arg(bins::test_server()));
    assert_eq!(code, Some(0));
    assert!(stdout.contains("secret://doc\n    doc"), "{stdout}");
    assert!(
        stdout.contains("secret://{name}\n    A secret by name"),
        "{stdout}"
    );
}

/// A required argument left out of `--args` is asked for before the call, from the tool's
/// input schema; Esc at the first question then declines it (exit 2).
#[test]
fn missing_arguments_are_asked_for_in_a_pty() {
    let mut session = pty(on_showcase(&["call", "export_dataset"]));
    session.expect("(argument `account`)").unwrap();
    session
        .expect("The account whose data is exported")
        .unwrap();
    keys(&mut session, &["acme", ENTER]);
    session
        .expect("Which dataset of acme should be exported?")
        .unwrap();
    session.send(ESC).unwrap();
    assert_eq!(exit_code(&mut session), 2);
}

/// `--legacy`: Ctrl-C while the server asks mid-call abandons the request with
/// `notifications/cancelled` and exits 2.
#[test]
fn ctrl_c_on_a_legacy_session_cancels_the_request() {
    let mut command = mrtr();
    command
        .args([
            "call",
            "tally",
            "--legacy",
            "--args",
            r#"{"label": "votes"}"#,
        ])
        .args(["--sample-reply", "kind", "--root"])
        .arg(std::env::temp_dir())
        .arg("--")
        .arg(bins::example("legacy_test_server"));
    let mut session = pty(command);
    session.expect("Esc declines").unwrap(); // the server's first question
    session.send(CTRL_C).unwrap();
    session
        .expect("cancelled; the server was told to stop (notifications/cancelled)")
        .unwrap();
    assert_eq!(exit_code(&mut session), 2);
}

/// Roots at a terminal: the current directory is shared only when confirmed ("n" here
/// shares none); without a terminal and without `--root`, roots are not offered at all.
#[test]
fn roots_are_shared_only_when_confirmed() {
    let mut session = pty(on_showcase(&["call", "organise_files"]));
    session.expect("with the server as a root?").unwrap();
    keys(&mut session, &["n", ENTER]);
    session
        .expect("The client shared no roots, so there is nothing to organise.")
        .unwrap();
    assert_eq!(exit_code(&mut session), 0);

    let (code, _, stderr) = run(&mut on_showcase(&["call", "organise_files"]));
    assert_eq!(code, Some(64), "{stderr}");
    assert!(stderr.contains("--root DIR"), "{stderr}");
}
