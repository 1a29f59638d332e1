//! Every supported construct, driven through all rounds with the state round-tripped
//! through its encoded bytes each round.

mod machine_support;

use std::sync::atomic::{AtomicUsize, Ordering};

use machine_support::*;
use mrtr::machine::{Elicited, ToolError};
use serde_json::json;

fn answer_text(value: &str) -> serde_json::Value {
    accept(json!({"text": value}))
}

/// Suspension as a `let` initializer, used in a larger expression, and arguments after it.
#[mrtr::tool]
async fn let_init(prefix: String, times: u32) -> Result<String, ToolError> {
    let word = ask!(text("Word?")).accepted()?;
    let length = ask!(text("Another?")).accepted()?.len() + word.len();
    Ok(format!("{prefix}:{}:{length}", word.repeat(times as usize)))
}

#[tokio::test]
async fn let_initializer_and_arguments_after_suspension() {
    let flow = drive(
        &let_init,
        json!({"prefix": "p", "times": 2}),
        |_, _, round| answer_text(if round == 0 { "ab" } else { "xyz" }),
    )
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "p:abab:5");
    assert_eq!(flow.rounds, vec![vec!["ask_0"], vec!["ask_1"]]);
}

/// Suspension as a match scrutinee, with guards in the arms.
#[mrtr::tool]
async fn scrutinee(run: Option<u8>) -> String {
    let _ = run;
    match ask!(choice("Pick", ["a", "b", "c"])) {
        Elicited::Accept(choice) if choice == "a" => "first".to_string(),
        Elicited::Accept(choice) => format!("other {choice}"),
        Elicited::Decline | Elicited::Cancel => "none".to_string(),
    }
}

#[tokio::test]
async fn match_scrutinee() {
    for (answer, expected) in [
        (accept(json!({"choice": "a"})), "first"),
        (accept(json!({"choice": "c"})), "other c"),
        (decline(), "none"),
    ] {
        let flow = drive(&scrutinee, json!({}), |_, _, _| answer.clone())
            .await
            .unwrap();
        assert_eq!(text(&flow.output), expected);
    }
}

/// Suspensions inside `if` / `else if` / `else` and `if let`, with shadowing.
#[mrtr::tool]
async fn branches(n: i64) -> String {
    let label = if n < 0 {
        ask!(text("negative?")).ok().unwrap_or_default()
    } else if n == 0 {
        "zero".to_string()
    } else {
        let label = ask!(text("positive?")).ok().unwrap_or_default();
        let label = format!("+{label}");
        label
    };
    if let Some(extra) = ask!(text("extra?")).ok() {
        let tail = ask!(text("tail?")).ok().unwrap_or_default();
        format!("{label}/{extra}/{tail}")
    } else {
        format!("{label}/-")
    }
}

#[tokio::test]
async fn if_else_if_else_and_if_let() {
    let flow = drive(&branches, json!({"n": -1}), |_, _, round| {
        answer_text(&round.to_string())
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "0/1/2");
    let flow = drive(&branches, json!({"n": 0}), |_, _, _| decline())
        .await
        .unwrap();
    assert_eq!(text(&flow.output), "zero/-");
    assert_eq!(flow.rounds.len(), 1);
    let flow = drive(&branches, json!({"n": 5}), |_, _, round| {
        answer_text(&round.to_string())
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "+0/1/2");
}

/// Suspensions in match arm bodies (arms with guards).
#[mrtr::tool]
async fn arms(kind: String) -> String {
    let mut log = Vec::new();
    match kind.as_str() {
        k if k.starts_with('a') => {
            let first = ask!(text("a?")).ok().unwrap_or_default();
            log.push(first);
        }
        "b" => log.push("b-direct".to_string()),
        _ => {
            let x = ask!(text("x?")).ok().unwrap_or_default();
            let y = ask!(text("y?")).ok().unwrap_or_default();
            log.push(format!("{x}{y}"));
        }
    }
    log.join(",")
}

#[tokio::test]
async fn match_arm_bodies() {
    let answer = |_: &str, _: &_, round: usize| answer_text(&format!("r{round}"));
    assert_eq!(
        text(
            &drive(&arms, json!({"kind": "abc"}), answer)
                .await
                .unwrap()
                .output
        ),
        "r0"
    );
    assert_eq!(
        text(
            &drive(&arms, json!({"kind": "b"}), answer)
                .await
                .unwrap()
                .output
        ),
        "b-direct"
    );
    assert_eq!(
        text(
            &drive(&arms, json!({"kind": "z"}), answer)
                .await
                .unwrap()
                .output
        ),
        "r0r1"
    );
}

/// `loop` with `break` value, `while`, `while let`, labeled break/continue.
#[mrtr::tool]
async fn loops(limit: u32) -> String {
    let mut count = 0u32;
    let found = loop {
        let answer = ask!(text("again?")).ok().unwrap_or_default();
        count += 1;
        if answer == "stop" || count >= limit {
            break answer;
        }
    };
    let mut i = 0;
    while i < 2 {
        let _ = ask!(confirm("tick?"));
        i += 1;
    }
    let mut queue = vec![1, 2, 3];
    let mut popped = Vec::new();
    while let Some(item) = queue.pop() {
        let keep = ask!(confirm(format!("keep {item}?"))).ok().unwrap_or(false);
        if keep {
            popped.push(item);
        }
    }
    let mut pairs = Vec::new();
    'outer: for a in 0..3 {
        for b in 0..3 {
            if b > a {
                continue 'outer;
            }
            if a == 2 && b == 1 {
                break 'outer;
            }
            let ok = ask!(confirm(format!("{a},{b}?"))).ok().unwrap_or(false);
            if ok {
                pairs.push(format!("{a}{b}"));
            }
        }
    }
    format!("{found}|{count}|{popped:?}|{}", pairs.join(" "))
}

#[tokio::test]
async fn loops_with_labels_and_values() {
    let flow = drive(&loops, json!({"limit": 10}), |_, request, round| {
        let msg = message(request);
        if msg == "again?" {
            answer_text(if round == 2 { "stop" } else { "go" })
        } else if msg.starts_with("keep") {
            accept(json!({"confirm": msg != "keep 2?"}))
        } else {
            accept(json!({"confirm": true}))
        }
    })
    .await
    .unwrap();
    // 3 loop rounds, 2 while rounds, 3 while-let rounds, pairs (0,0) (1,0) (1,1) (2,0).
    assert_eq!(text(&flow.output), "stop|3|[3, 1]|00 10 11 20");
    assert_eq!(flow.rounds.len(), 3 + 2 + 3 + 4);
}

/// `for` over `a..b`, `a..=b` and an owned collection; loops running 0, 1 and many times.
#[mrtr::tool]
async fn fors(n: u32) -> String {
    let mut out = Vec::new();
    for i in 0..n {
        let answer = ask!(text(format!("range {i}"))).ok().unwrap_or_default();
        out.push(format!("r{i}={answer}"));
    }
    for i in 1..=n {
        let answer = ask!(text(format!("inclusive {i}")))
            .ok()
            .unwrap_or_default();
        out.push(format!("i{i}={answer}"));
    }
    let names: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
    for name in names {
        let ok = ask!(confirm(format!("{name}?"))).ok().unwrap_or(false);
        out.push(format!("{name}:{ok}"));
    }
    out.join(",")
}

#[tokio::test]
async fn for_loops_zero_one_many() {
    let answer = |_: &str, request: &_, _| {
        let msg = message(request);
        if msg.ends_with('?') {
            accept(json!({"confirm": true}))
        } else {
            answer_text(&msg.replace(' ', ""))
        }
    };
    let zero = drive(&fors, json!({"n": 0}), answer).await.unwrap();
    assert_eq!(text(&zero.output), "");
    assert!(zero.rounds.is_empty());
    let one = drive(&fors, json!({"n": 1}), answer).await.unwrap();
    assert_eq!(text(&one.output), "r0=range0,i1=inclusive1,n0:true");
    let many = drive(&fors, json!({"n": 3}), answer).await.unwrap();
    assert_eq!(many.rounds.len(), 9);
    assert_eq!(
        text(&many.output),
        "r0=range0,r1=range1,r2=range2,i1=inclusive1,i2=inclusive2,i3=inclusive3,n0:true,n1:true,n2:true"
    );
}

/// Early `return`, `?` on `Result` and `Option` before and after a suspension.
#[mrtr::tool]
async fn early(mode: String) -> Result<String, ToolError> {
    let number: u32 = mode.parse().map_err(ToolError::new)?;
    if number == 0 {
        return Ok("zero".into());
    }
    let answer = ask!(text("value?")).accepted()?;
    let parsed: u32 = answer.parse()?;
    if parsed == 7 {
        return Ok("seven".into());
    }
    Ok(format!("{}", number + parsed))
}

fn option_helper(value: Option<u32>) -> Option<u32> {
    value
}

#[mrtr::tool]
async fn early_option(start: Option<u32>) -> Option<String> {
    let first = option_helper(start)?;
    let answer = ask!(text("more?")).ok()?;
    Some(format!("{first}{answer}"))
}

#[tokio::test]
async fn early_return_and_question_mark() {
    let f = |s: &'static str| move |_: &str, _: &_, _| answer_text(s);
    let zero = drive(&early, json!({"mode": "0"}), f("1")).await.unwrap();
    assert_eq!(text(&zero.output), "zero");
    let bad = drive(&early, json!({"mode": "x"}), f("1")).await.unwrap();
    assert_eq!(bad.output.is_error, Some(true));
    let seven = drive(&early, json!({"mode": "3"}), f("7")).await.unwrap();
    assert_eq!(text(&seven.output), "seven");
    let sum = drive(&early, json!({"mode": "3"}), f("4")).await.unwrap();
    assert_eq!(text(&sum.output), "7");
    let not_number = drive(&early, json!({"mode": "3"}), f("x")).await.unwrap();
    assert_eq!(not_number.output.is_error, Some(true));
    let declined = drive(&early, json!({"mode": "3"}), |_, _, _| decline())
        .await
        .unwrap();
    assert_eq!(text(&declined.output), "the user declined");
}

/// Nested blocks, shadowing across scopes, and mutation across rounds.
#[mrtr::tool]
#[allow(clippy::let_and_return)]
async fn scopes() -> String {
    let x = 1;
    let mut total = 0;
    {
        let x = ask!(text("inner x?")).ok().unwrap_or_default();
        total += x.len();
        {
            let y = ask!(text("y?")).ok().unwrap_or_default();
            total += y.len() * 10;
        }
    }
    let x = x + total;
    let z = ask!(text("z?")).ok().unwrap_or_default();
    format!("{x} {z}")
}

#[tokio::test]
async fn nested_blocks_and_shadowing() {
    let flow = drive(&scopes, json!({}), |_, _, round| {
        answer_text(&"a".repeat(round + 1))
    })
    .await
    .unwrap();
    // inner x = "a" (1), y = "aa" (20), x = 1 + 21
    assert_eq!(text(&flow.output), "22 aaa");
}

/// `.await` anywhere in a round; code between suspensions runs exactly once per flow.
static BEFORE: AtomicUsize = AtomicUsize::new(0);
static BETWEEN: AtomicUsize = AtomicUsize::new(0);
static AFTER: AtomicUsize = AtomicUsize::new(0);

async fn slow_double(n: usize) -> usize {
    tokio::task::yield_now().await;
    n * 2
}

#[mrtr::tool]
async fn counted() -> String {
    BEFORE.fetch_add(1, Ordering::SeqCst);
    let base = slow_double(1).await;
    let mut seen = Vec::new();
    for i in 0..3 {
        let a = ask!(text(format!("a{i}"))).ok().unwrap_or_default();
        BETWEEN.fetch_add(1, Ordering::SeqCst);
        let b = ask!(text(format!("b{i}"))).ok().unwrap_or_default();
        seen.push(format!("{a}{b}{}", slow_double(i).await));
    }
    AFTER.fetch_add(1, Ordering::SeqCst);
    format!("{base} {}", seen.join(" "))
}

#[tokio::test]
async fn code_between_suspensions_runs_once() {
    let flow = drive(&counted, json!({}), |_, request, _| {
        answer_text(&message(request))
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "2 a0b00 a1b12 a2b24");
    assert_eq!(flow.rounds.len(), 6);
    assert_eq!(BEFORE.load(Ordering::SeqCst), 1);
    assert_eq!(BETWEEN.load(Ordering::SeqCst), 3);
    assert_eq!(AFTER.load(Ordering::SeqCst), 1);
}

/// Locals moved before a suspension are not stored; `join!` asks several in one round.
#[mrtr::tool]
async fn moved_and_joined() -> String {
    let big = vec![0u8; 4096];
    let size = big.len();
    drop(big);
    let (name, summary, roots) = mrtr::join!(
        ask!(key = "name", text("Name?")),
        sample!(prompt("Summarize").max_tokens(10)),
        roots!()
    );
    format!(
        "{size} {} {} {}",
        name.ok().unwrap_or_default(),
        summary.text(),
        roots.len()
    )
}

#[tokio::test]
async fn moved_locals_are_not_stored_and_join_is_one_round() {
    let flow = drive(&moved_and_joined, json!({}), |key, _, _| match key {
        "name" => answer_text("Ada"),
        k if k.starts_with("sample") => sampled("short"),
        _ => roots(&["file:///a", "file:///b"]),
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "4096 Ada short 2");
    assert_eq!(flow.rounds, vec![vec!["name", "roots_2", "sample_1"]]);
    let raw = drive_raw(&moved_and_joined, json!({}), |key, _, _| match key {
        "name" => answer_text("Ada"),
        k if k.starts_with("sample") => sampled("short"),
        _ => roots(&[]),
    })
    .await
    .unwrap();
    assert!(
        raw.state_sizes[0] < 16,
        "state {} bytes",
        raw.state_sizes[0]
    );
}

/// `?` and `return` inside a format-like macro's arguments still target the function.
#[mrtr::tool]
async fn in_macro_args(raw: String) -> Result<String, ToolError> {
    let name = ask!(text("Name?")).accepted()?;
    let line = format!("{name}:{}", raw.parse::<u8>()?);
    Ok(line)
}

#[tokio::test]
async fn question_mark_inside_macro_arguments() {
    let ok = drive(&in_macro_args, json!({"raw": "7"}), |_, _, _| {
        answer_text("a")
    })
    .await
    .unwrap();
    assert_eq!(text(&ok.output), "a:7");
    let bad = drive(&in_macro_args, json!({"raw": "x"}), |_, _, _| {
        answer_text("a")
    })
    .await
    .unwrap();
    assert_eq!(bad.output.is_error, Some(true));
}

/// A tool without suspensions, a synchronous one, structured output, and the input kinds
/// read from the builders.
#[mrtr::tool]
fn plain_sync(a: u32, b: Option<u32>) -> rmcp::Json<serde_json::Value> {
    rmcp::Json(json!({"sum": a + b.unwrap_or(0)}))
}

/// A structured report.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Report {
    /// How many checks passed.
    passed: u32,
}

/// Structured output behind `Result`: listed with an output schema.
#[mrtr::tool]
async fn structured_report() -> Result<rmcp::Json<Report>, mrtr::machine::ToolError> {
    let passed = ask!(confirm("All good?")).ok().map_or(0, u32::from);
    Ok(rmcp::Json(Report { passed }))
}

#[tokio::test]
async fn structured_results_are_listed_with_an_output_schema() {
    use mrtr::machine::{Listing, Machine};
    let Listing::Tool(tool) = &structured_report.descriptor().listing else {
        panic!("a tool")
    };
    let schema = tool.output_schema.as_ref().expect("an output schema");
    assert_eq!(schema["properties"]["passed"]["type"], "integer");
    let Listing::Tool(plain) = &url_and_tools.descriptor().listing else {
        panic!("a tool")
    };
    assert!(
        plain.output_schema.is_none(),
        "text results have no output schema"
    );
    let flow = drive(&structured_report, json!({}), |_, _, _| {
        accept(json!({"confirm": true}))
    })
    .await
    .unwrap();
    assert_eq!(flow.output.structured_content, Some(json!({"passed": 1})));
}

#[mrtr::tool(name = "sign_in")]
async fn url_and_tools() -> String {
    let consent = ask!(url("Sign in", "https://example.com/login"));
    let reply = sample!(prompt("Pick a tool").tools(Vec::new()));
    format!("{} {}", consent.is_accepted(), reply.text())
}

#[tokio::test]
async fn no_suspension_sync_structured_and_kinds() {
    use mrtr::machine::{InputKind, Machine};
    let flow = drive(&plain_sync, json!({"a": 2}), |_, _, _| unreachable!())
        .await
        .unwrap();
    assert!(flow.rounds.is_empty());
    assert_eq!(flow.output.structured_content, Some(json!({"sum": 2})));
    assert!(plain_sync.descriptor().input_kinds.is_empty());
    assert_eq!(
        url_and_tools.descriptor().input_kinds,
        vec![InputKind::UrlElicitation, InputKind::SamplingWithTools]
    );
    let flow = drive(&url_and_tools, json!({}), |key, _, _| {
        if key.starts_with("ask") {
            json!({"action": "accept"})
        } else {
            sampled("grep")
        }
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "true grep");
}

/// Pattern bindings (match arms, `if let`, `while let`, `for`) used after a suspension.
#[mrtr::tool]
async fn bindings_across(maybe: Option<String>) -> String {
    let mut out = Vec::new();
    match maybe {
        Some(value) if value.len() > 1 => {
            let answer = ask!(text("long?")).ok().unwrap_or_default();
            out.push(format!("{value}{answer}"));
        }
        Some(value) => out.push(value),
        None => {}
    }
    if let Some((left, right)) = Some((1u8, String::from("r"))) {
        let answer = ask!(text("pair?")).ok().unwrap_or_default();
        out.push(format!("{left}{right}{answer}"));
    }
    for (index, word) in vec![String::from("a"), String::from("b")]
        .into_iter()
        .enumerate()
        .collect::<Vec<_>>()
    {
        let answer = ask!(text("word?")).ok().unwrap_or_default();
        out.push(format!("{index}{word}{answer}"));
    }
    out.join(",")
}

#[tokio::test]
async fn pattern_bindings_survive_suspensions() {
    let flow = drive(&bindings_across, json!({"maybe": "vv"}), |_, _, round| {
        answer_text(&round.to_string())
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "vv0,1r1,0a2,1b3");
    let flow = drive(&bindings_across, json!({"maybe": "v"}), |_, _, round| {
        answer_text(&round.to_string())
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "v,1r0,0a1,1b2");
}

/// `return` of a suspension, value-producing `match` arms, `break value` from an arm,
/// `continue` in `while`, and shadowing an argument.
#[mrtr::tool]
async fn odd_corners(service: String, n: u32) -> String {
    let service = service.to_uppercase();
    if n == 9 {
        return ask!(text("why?")).ok().unwrap_or_default();
    }
    let picked = match n {
        0 => ask!(text("zero?")).ok().unwrap_or_default(),
        _ => String::from("many"),
    };
    let found = loop {
        match ask!(text("word?")) {
            Elicited::Accept(word) if word.len() > 1 => break word,
            _ => continue,
        }
    };
    let mut i = 0;
    let mut odd = Vec::new();
    while i < 4 {
        i += 1;
        if i % 2 == 0 {
            continue;
        }
        let answer = ask!(text(format!("odd {i}?"))).ok().unwrap_or_default();
        odd.push(answer);
    }
    format!("{service} {picked} {found} {}", odd.join("+"))
}

#[tokio::test]
async fn odd_corners_behave() {
    let flow = drive(
        &odd_corners,
        json!({"service": "api", "n": 9}),
        |_, _, _| answer_text("because"),
    )
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "because");
    let flow = drive(
        &odd_corners,
        json!({"service": "api", "n": 0}),
        |_, request, round| {
            let msg = message(request);
            match msg.as_str() {
                "zero?" => answer_text("z"),
                "word?" if round < 3 => answer_text("x"),
                "word?" => answer_text("long"),
                other => answer_text(&other.replace(' ', "")),
            }
        },
    )
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "API z long odd1?+odd3?");
    assert_eq!(flow.rounds.len(), 1 + 3 + 2);
}

/// Deferred initialization (`let x;` assigned in branches) and let chains.
#[mrtr::tool]
async fn deferred_and_chains(n: u32) -> String {
    let x;
    if n > 1 {
        x = ask!(text("a")).ok().unwrap_or_default();
    } else {
        x = String::from("small");
    }
    let opt = Some(n);
    if let Some(v) = opt
        && v > 2
    {
        let a = ask!(text("b")).ok().unwrap_or_default();
        return format!("{x} {v}{a}");
    }
    x
}

#[tokio::test]
async fn deferred_initialization_and_let_chains() {
    let answer = |_: &str, _: &_, round: usize| answer_text(&format!("r{round}"));
    assert_eq!(
        text(
            &drive(&deferred_and_chains, json!({"n": 0}), answer)
                .await
                .unwrap()
                .output
        ),
        "small"
    );
    assert_eq!(
        text(
            &drive(&deferred_and_chains, json!({"n": 2}), answer)
                .await
                .unwrap()
                .output
        ),
        "r0"
    );
    assert_eq!(
        text(
            &drive(&deferred_and_chains, json!({"n": 5}), answer)
                .await
                .unwrap()
                .output
        ),
        "r0 5r1"
    );
}

/// In a let chain the `let`'s binding shadows an outer local of the same name in the
/// conditions after it too: the outer `v`, moved before the suspension, is not stored.
#[mrtr::tool]
async fn chain_shadowing() -> String {
    let v = String::from("moved");
    drop(v);
    let answer = ask!(text("a")).ok().unwrap_or_default();
    if let Some(v) = answer.strip_prefix('x')
        && !v.is_empty()
    {
        return v.to_string();
    }
    answer
}

#[tokio::test]
async fn a_let_chain_binding_shadows_in_later_conditions() {
    for (typed, expected) in [("xyz", "yz"), ("x", "x"), ("abc", "abc")] {
        let flow = drive(&chain_shadowing, json!({}), |_, _, _| answer_text(typed))
            .await
            .unwrap();
        assert_eq!(text(&flow.output), expected, "{typed}");
    }
}

/// An `if let` guard binds for its arm's body, also when the arm suspends.
#[mrtr::tool]
async fn guard_bindings(raw: String) -> String {
    match raw.parse::<u32>() {
        Ok(n)
            if let Some(v) = n.checked_sub(1)
                && v > 0 =>
        {
            let again = ask!(text("Again?")).ok().unwrap_or_default();
            format!("{v}{again}")
        }
        _ => String::from("none"),
    }
}

#[tokio::test]
async fn an_if_let_guard_binds_for_its_suspending_arm() {
    let answer = |_: &str, _: &_, _| answer_text("!");
    let flow = drive(&guard_bindings, json!({"raw": "5"}), answer)
        .await
        .unwrap();
    assert_eq!(text(&flow.output), "4!");
    assert_eq!(flow.rounds.len(), 1);
    let flow = drive(&guard_bindings, json!({"raw": "1"}), answer)
        .await
        .unwrap();
    assert_eq!(text(&flow.output), "none");
    assert!(flow.rounds.is_empty());
}

/// A JSON value cannot live across a suspension (postcard cannot restore it): the tool is
/// refused before its first round, naming the local; wrapped in `JsonText` it works.
#[mrtr::tool]
async fn json_across() -> String {
    let value = json!({"a": [1, 2]});
    let kept = mrtr::machine::JsonText::new(&value).unwrap();
    let _ = ask!(confirm("go?"));
    kept.get().unwrap()["a"][1].to_string()
}

#[mrtr::tool]
async fn json_unwrapped() -> String {
    let value = json!({"a": [1, 2]});
    let _ = ask!(confirm("go?"));
    value["a"][1].to_string()
}

#[tokio::test]
async fn json_values_need_json_text() {
    let ok = drive(&json_across, json!({}), |_, _, _| {
        accept(json!({"confirm": true}))
    })
    .await
    .unwrap();
    assert_eq!(text(&ok.output), "2");
    let error = drive(&json_unwrapped, json!({}), |_, _, _| {
        accept(json!({"confirm": true}))
    })
    .await
    .err()
    .expect("a Value held across a suspension cannot be sealed");
    assert_eq!(error.code, rmcp::model::ErrorCode::INTERNAL_ERROR);
    assert!(
        error
            .message
            .starts_with("`json_unwrapped`: the local `value` cannot be kept across a suspension"),
        "{}",
        error.message
    );
}

static ACROSS_BEFORE: AtomicUsize = AtomicUsize::new(0);
static ACROSS_BETWEEN: AtomicUsize = AtomicUsize::new(0);

#[mrtr::tool]
async fn counted_across() -> String {
    ACROSS_BEFORE.fetch_add(1, Ordering::SeqCst);
    let mut seen = Vec::new();
    for i in 0..4 {
        let a = ask!(text(format!("a{i}"))).ok().unwrap_or_default();
        ACROSS_BETWEEN.fetch_add(1, Ordering::SeqCst);
        seen.push(a);
    }
    seen.join("")
}

/// Two server instances sharing keys serve alternate rounds of one flow.
#[tokio::test]
async fn rounds_alternate_between_instances_and_run_once() {
    use mrtr::testing::{Harness, Reply};
    use mrtr::token::{KeyId, KeyRing, SecretKey};
    let keys = || KeyRing::new(KeyId(9), SecretKey::from_bytes([42; 32]));
    let instances = [Harness::with_keys(keys()), Harness::with_keys(keys())];
    let (mut state, mut responses) = (None, None);
    for round in 0.. {
        let reply = instances[round % 2]
            .request(&counted_across, json!({}), state.take(), responses.take())
            .await
            .unwrap();
        match reply {
            Reply::Complete(result) => {
                assert_eq!(text(&result), "a0a1a2a3");
                assert_eq!(round, 4);
                break;
            }
            Reply::InputRequired(input) => {
                let requests = input.input_requests.unwrap();
                responses = Some(
                    requests
                        .iter()
                        .map(|(key, request)| (key.clone(), answer_text(&message(request))))
                        .collect(),
                );
                state = input.request_state;
            }
        }
    }
    assert_eq!(ACROSS_BEFORE.load(Ordering::SeqCst), 1);
    assert_eq!(ACROSS_BETWEEN.load(Ordering::SeqCst), 4);
}
