//! One test per crash the fuzz targets (`fuzz/`, `mrtr-fuzz`) found, on stable. The raw
//! crash inputs are replayed too, from `fuzz/regressions/<target>/`, by
//! `mrtr-fuzz/tests/bounded.rs`.

mod machine_support;

use machine_support::*;
use mrtr::form::RequestedForm;
use mrtr::machine::{Machine, ToolError};
use mrtr::testing::{Harness, Reply};
use mrtr::token::{Clock, KeyId, KeyRing, REJECTED_STATE_MESSAGE, SecretKey};
use mrtr_cli::form::parse_text;
use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer, encode_json_payload, split_payload};
use serde_json::{Value, json};

fn form(properties: Value) -> RequestedForm {
    RequestedForm::parse(&json!({"type": "object", "properties": properties})).expect("a form")
}

/// terminal: a typed date-time whose 10th byte falls inside a multi-byte character
/// panicked (`text[..10]` on a non-boundary).
#[test]
fn typed_date_time_with_multibyte_characters_is_refused_not_a_panic() {
    let form = form(json!({"at": {"type": "string", "format": "date-time"}}));
    let field = &form.fields()[0];
    for typed in [
        "ééééé1T",
        "2026-02-2éT10:00:00Z",
        "Zo\u{fffd}K\u{fffd}\u{fffd}q\u{2d4d}",
    ] {
        let error = parse_text(field, typed).expect_err("not a date-time");
        assert!(error.contains("date-time"), "{typed}: {error}");
    }
}

/// terminal: the client accepted date-times, dates and emails the server then refused, so
/// the user was asked the same question again forever. The terminal now checks typed and
/// scripted answers with the server's own validator.
#[test]
fn the_terminal_refuses_what_the_server_would_refuse() {
    let form = form(json!({
        "at": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "email": {"type": "string", "format": "email"}}));
    let [at, day, email] = form.fields() else {
        panic!("three fields");
    };
    assert!(parse_text(at, "2026-02-28T10:00").is_err());
    assert!(parse_text(at, "2026-02-28T10:00:00Z").is_ok());
    assert!(parse_text(day, "2026-02-30").is_err());
    assert!(parse_text(email, "a@b..c").is_err());
    assert!(form.check(&json!({"day": "2026-02-30"})).is_err());
    assert!(
        form.check(&json!({"day": "2026-02-28", "email": "a@b.c"}))
            .is_ok()
    );
}

/// answers: a form's `date` field accepted `26-01-02` (chrono's `%Y` reads year 26), not
/// an RFC 3339 full-date.
#[test]
fn a_date_needs_four_year_digits() {
    let form = form(json!({"day": {"type": "string", "format": "date"}}));
    assert!(form.check(&json!({"day": "26-01-02"})).is_err());
    assert!(form.check(&json!({"day": "2026-1-02"})).is_err());
    assert!(form.check(&json!({"day": "0026-01-02"})).is_ok());
}

/// terminal (stable driver, on main after the validators became one): a date of ten bytes
/// whose 5th byte is inside a multi-byte character (`"2026\u{fffd}-02"`) panicked in the
/// shared validator (`&text[4..5]`), on the server's answer check as in the terminal.
#[test]
fn a_date_cut_inside_a_multibyte_character_is_refused_not_a_panic() {
    let form = form(json!({
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"}}));
    for day in ["2026\u{fffd}-02", "20é6-02-28", "2026-0é-28"] {
        let error = form.check(&json!({"day": day})).expect_err("not a date");
        assert!(
            error.to_string().contains("calendar date"),
            "{day}: {error}"
        );
        assert!(parse_text(&form.fields()[0], day).is_err(), "{day}");
    }
    let at = "2026\u{fffd}-02-28T10:00:00Z";
    assert!(form.check(&json!({"at": at})).is_err());
    assert!(parse_text(&form.fields()[1], at).is_err());
}

fn pick(names: &[String], prefix: &str) -> Result<Option<String>, ToolError> {
    if prefix.is_empty() {
        return Err(ToolError::new("an empty prefix"));
    }
    Ok(names.iter().find(|name| name.starts_with(prefix)).cloned())
}

/// macro_bodies: `let PAT = EXPR? else { .. }` after a suspension expanded to
/// `let PAT = match .. { .. } else { .. }`, which does not parse (this file would not compile).
#[mrtr::tool]
async fn first_match(names: Vec<String>) -> Result<String, ToolError> {
    let prefix = ask!(text("Prefix?")).accepted()?;
    let Some(found) = pick(&names, &prefix)? else {
        return Ok("nobody".into());
    };
    Ok(found)
}

#[tokio::test]
async fn let_else_on_a_question_mark_after_a_suspension_compiles_and_runs() {
    let arguments = json!({"names": ["ada", "grace"]});
    for (typed, expected) in [("gr", "grace"), ("x", "nobody")] {
        let flow = drive(&first_match, arguments.clone(), |_, _, _| {
            accept(json!({"text": typed}))
        })
        .await
        .expect("the flow completes");
        assert_eq!(text(&flow.output), expected);
    }
    let error = drive(&first_match, arguments, |_, _, _| {
        accept(json!({"text": ""}))
    })
    .await
    .expect("the flow completes");
    assert!(text(&error.output).contains("empty prefix"));
}

/// macro_bodies: a statement starting with a `?` after a suspension (`x?.method();`,
/// `x? + y;`) expanded to `match .. { .. }.method();`, which does not parse (this file would
/// not compile).
#[mrtr::tool]
async fn shout() -> Result<String, ToolError> {
    let mut name = String::new();
    ask!(text("Name?")).accepted()?.clone_into(&mut name);
    Ok(name.to_uppercase())
}

#[tokio::test]
async fn a_statement_starting_with_a_question_mark_after_a_suspension_compiles_and_runs() {
    let flow = drive(&shout, json!({}), |_, _, _| accept(json!({"text": "ada"})))
        .await
        .expect("the flow completes");
    assert_eq!(text(&flow.output), "ADA");
    let declined = drive(&shout, json!({}), |_, _, _| json!({"action": "decline"}))
        .await
        .expect("the flow completes");
    assert!(
        text(&declined.output).to_lowercase().contains("decline"),
        "{}",
        text(&declined.output)
    );
}

/// macro_bodies: a branch after a suspension that initializes a local declared before it
/// and whose value is kept (`let when = if ..? { start = 1; .. } else { .. };`) expanded to
/// `let t = let mut start; { .. };`, which does not parse (this file would not compile).
#[mrtr::tool]
async fn schedule() -> Result<String, ToolError> {
    let start: u32;
    let when = if ask!(confirm("Now?")).accepted()? {
        start = 1;
        "now"
    } else {
        start = 2;
        "later"
    };
    Ok(format!("{when} {start}"))
}

#[tokio::test]
async fn a_valued_branch_initializing_a_deferred_local_compiles_and_runs() {
    for (confirmed, expected) in [(true, "now 1"), (false, "later 2")] {
        let flow = drive(&schedule, json!({}), |_, _, _| {
            accept(json!({"confirm": confirmed}))
        })
        .await
        .expect("the flow completes");
        assert_eq!(text(&flow.output), expected);
    }
}

/// hostile_state: a token sealed with the server's key (leaked) whose pending requests do
/// not include the key the state resumes at made the machine take an answer it never asked:
/// `-32603` (internal error) instead of the rejected-state `-32602`.
#[tokio::test]
async fn forged_pending_requests_are_a_rejected_state_not_an_internal_error() {
    let keys = KeyRing::new(KeyId(1), SecretKey::from_bytes([0x44; 32]));
    let harness = Harness::with_keys(keys.clone());
    let arguments = json!({"names": ["ada"]});
    let Ok(Reply::InputRequired(asked)) = harness
        .request(&first_match, arguments.clone(), None, None)
        .await
    else {
        panic!("the tool asks first");
    };
    let genuine = asked.request_state.expect("a requestState");
    let sealer = FuzzSealer::new(keys, harness.clock().now_unix_seconds());
    let binding = BindingSpec::for_harness(
        first_match.descriptor(),
        arguments.as_object().cloned().unwrap_or_default(),
    );
    let opened = sealer
        .open(&genuine, &binding)
        .expect("the harness's own token");
    let (_, state) = split_payload(&opened.payload).expect("a server payload");
    // The genuine state, sealed after no pending request at all.
    let forged_payload = encode_json_payload(&[], state).expect("encodes");
    let forged = sealer
        .seal_payload(
            &binding,
            opened.fingerprint,
            opened.round,
            forged_payload,
            [9; 24],
        )
        .expect("seals");
    let refused = harness
        .request_explained(
            &first_match,
            arguments,
            Some(forged),
            Some(Default::default()),
        )
        .await
        .expect_err("a forged token is refused");
    assert_eq!(refused.error.code.0, -32602);
    assert_eq!(refused.error.message, REJECTED_STATE_MESSAGE);
    assert_eq!(
        refused.rejection,
        Some("pending_requests_do_not_match_state")
    );
}
