//! Everyday Rust in `#[mrtr::tool]` bodies (issue 8): application state, maps and sets,
//! loops over borrowed iterators, string literals, deferred initialization in brace-less
//! arms, suspensions after a pure prefix, names that collide with generated ones, and
//! states that cannot be stored. Every flow goes through real sealing each round.

mod machine_support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use machine_support::*;
use mrtr::State;
use mrtr::machine::{AsJson, Elicited, ToolError};
use mrtr::testing::Harness;
use serde_json::json;

fn failure<O>(result: Result<Flow<O>, rmcp::ErrorData>) -> rmcp::ErrorData {
    match result {
        Ok(_) => panic!("the flow completed"),
        Err(error) => error,
    }
}

fn answer_text(value: &str) -> serde_json::Value {
    accept(json!({"text": value}))
}

fn yes() -> serde_json::Value {
    accept(json!({"confirm": true}))
}

/// A connection-pool-like shared object: the test reads what the tool did through it.
#[derive(Default)]
struct Pool {
    writes: AtomicU32,
    connects: AtomicU32,
}

/// Counts a connect on every round (state is injected each round) and a write at the end.
#[mrtr::tool]
async fn purge(pool: State<Arc<Pool>>, table: String) -> Result<String, ToolError> {
    pool.connects.fetch_add(1, Ordering::SeqCst);
    let go = ask!(confirm(format!("Purge {table}?"))).accepted()?;
    if go {
        pool.writes.fetch_add(1, Ordering::SeqCst);
    }
    Ok(format!("purged {table}: {go}"))
}

/// The destructuring form, and two states.
#[mrtr::tool]
async fn tally(State(counter): State<Arc<AtomicU32>>, State(prefix): State<String>) -> String {
    let before = counter.fetch_add(1, Ordering::SeqCst);
    let word = ask!(text("Word?")).ok().unwrap_or_default();
    format!("{prefix}{before}:{word}:{}", counter.load(Ordering::SeqCst))
}

#[tokio::test]
async fn app_state_is_injected_every_round_and_never_stored() {
    let pool = Arc::new(Pool::default());
    let harness = Harness::new().app_state(pool.clone());
    let flow = drive_with(&harness, &purge, json!({"table": "logs"}), |_, _, _| yes())
        .await
        .unwrap();
    assert_eq!(text(&flow.output), "purged logs: true");
    // Code before the suspension ran once; the state was injected into both rounds.
    assert_eq!(pool.connects.load(Ordering::SeqCst), 1);
    assert_eq!(pool.writes.load(Ordering::SeqCst), 1);

    let counter = Arc::new(AtomicU32::new(10));
    let harness = Harness::new()
        .app_state(counter.clone())
        .app_state(String::from("n="));
    let flow = drive_with(&harness, &tally, json!({}), |_, _, _| answer_text("hi"))
        .await
        .unwrap();
    assert_eq!(text(&flow.output), "n=10:hi:11");
    assert_eq!(counter.load(Ordering::SeqCst), 11);
}

#[tokio::test]
async fn a_missing_state_is_refused_before_anything_runs() {
    let error = failure(drive(&purge, json!({"table": "logs"}), |_, _, _| yes()).await);
    assert!(
        error
            .message
            .contains("State<alloc::sync::Arc<everyday_rust::Pool>>"),
        "{}",
        error.message
    );
    let built = mrtr::server::McpServer::builder("t")
        .keys(mrtr::token::KeyRing::generate_process_local().unwrap())
        .tool(purge)
        .build();
    let Err(error) = built else {
        panic!("build() accepted a tool whose state is not registered")
    };
    assert!(matches!(
        error,
        mrtr::server::BuildError::MissingState { ref machine, .. } if machine == "purge"
    ));
    assert!(error.to_string().contains(".app_state(value)"), "{error}");
}

/// Many entries in hashed collections, kept across two suspensions.
#[mrtr::tool]
async fn dedupe(count: u32) -> String {
    let mut seen = HashSet::new();
    let mut owners: HashMap<String, u32> = HashMap::new();
    for n in 0..count {
        seen.insert(format!("file-{n}"));
        owners.insert(format!("owner-{}", n % 7), n);
    }
    let extra = ask!(text("Extra file?")).ok().unwrap_or_default();
    seen.insert(extra);
    let _ = ask!(confirm("Continue?"));
    let mut owners: Vec<_> = owners.into_iter().collect();
    owners.sort();
    format!("{} {:?}", seen.len(), owners)
}

#[tokio::test]
async fn hash_maps_and_sets_survive_suspensions_every_time() {
    for count in [2u32, 10, 200] {
        let mut owners: Vec<(String, u32)> = (0..count)
            .map(|n| (format!("owner-{}", n % 7), n))
            .collect::<HashMap<_, _>>()
            .into_iter()
            .collect();
        owners.sort();
        let expected = format!("{} {:?}", count + 1, owners);
        for _ in 0..25 {
            let flow = drive(&dedupe, json!({"count": count}), |_, _, round| {
                if round == 0 {
                    answer_text("extra")
                } else {
                    yes()
                }
            })
            .await
            .unwrap();
            assert_eq!(text(&flow.output), expected);
        }
    }
}

/// Loops over borrowed iterators, each asking in the body.
#[mrtr::tool]
async fn review(files: Vec<String>, notes: BTreeMap<String, u32>, text_block: String) -> String {
    let mut log = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let ok = ask!(confirm(format!("Ship {f} ({i})?")))
            .ok()
            .unwrap_or(false);
        log.push(format!("{i}:{f}:{ok}:{}", f.len()));
    }
    for f in &files {
        let _ = ask!(text(format!("Note for {f}?")));
        let f: &String = f; // still a reference after the suspension
        log.push(f.to_uppercase());
    }
    for (name, weight) in &notes {
        let _ = ask!(confirm(format!("{name}={weight}?")));
        log.push(format!("{name}*{}", *weight * 2));
    }
    for key in notes.keys() {
        let _ = ask!(confirm(format!("key {key}")));
        log.push(key.clone());
    }
    for line in text_block.lines() {
        let answer = ask!(text(format!("line {line}"))).ok().unwrap_or_default();
        log.push(format!("{}{answer}", line.trim()));
    }
    for pair in files.chunks(2) {
        let _ = ask!(confirm(format!("pair {}", pair.len())));
        log.push(pair.join("+"));
    }
    for (a, b) in files.iter().zip(files.iter().skip(1)) {
        let _ = ask!(confirm("zip"));
        log.push(format!("{a}<{b}"));
    }
    for big in files.iter().filter(|f| f.len() > 5) {
        let _ = ask!(confirm("big"));
        log.push(format!("big {big}"));
    }
    for (i, f) in files.clone().into_iter().enumerate() {
        let _ = ask!(confirm("owned"));
        let mut owned: String = f;
        owned.push('!');
        log.push(format!("{i}{owned}"));
    }
    log.join(",")
}

fn review_plain(files: &[String], notes: &BTreeMap<String, u32>, text_block: &str) -> String {
    let mut log = Vec::new();
    for (i, f) in files.iter().enumerate() {
        log.push(format!("{i}:{f}:true:{}", f.len()));
    }
    for f in files {
        log.push(f.to_uppercase());
    }
    for (name, weight) in notes {
        log.push(format!("{name}*{}", *weight * 2));
    }
    for key in notes.keys() {
        log.push(key.clone());
    }
    for line in text_block.lines() {
        log.push(format!("{}ok", line.trim()));
    }
    for pair in files.chunks(2) {
        log.push(pair.join("+"));
    }
    for (a, b) in files.iter().zip(files.iter().skip(1)) {
        log.push(format!("{a}<{b}"));
    }
    for big in files.iter().filter(|f| f.len() > 5) {
        log.push(format!("big {big}"));
    }
    for (i, f) in files.iter().cloned().enumerate() {
        log.push(format!("{i}{f}!"));
    }
    log.join(",")
}

#[tokio::test]
async fn loops_over_borrowed_iterators_see_the_same_items() {
    let files: Vec<String> = ["a.rs", "long_name.rs", "c.rs"].map(String::from).into();
    let notes: BTreeMap<String, u32> = [("x".to_string(), 2), ("y".to_string(), 5)].into();
    let block = "  one\ntwo ";
    let mut questions = Vec::new();
    let flow = drive(
        &review,
        json!({"files": files, "notes": notes, "text_block": block}),
        |_, request, _| {
            let question = message(request);
            let reply = if question.starts_with("line") || question.starts_with("Note") {
                answer_text("ok")
            } else {
                yes()
            };
            questions.push(question);
            reply
        },
    )
    .await
    .unwrap();
    assert_eq!(text(&flow.output), review_plain(&files, &notes, block));
    assert_eq!(questions[0], "Ship a.rs (0)?");
    assert_eq!(questions[3], "Note for a.rs?");
    assert_eq!(questions[6], "x=2?");
}

/// String literals kept across suspensions.
#[mrtr::tool]
async fn environments(prod: bool) -> String {
    let env = if prod { "production" } else { "staging" };
    let label: Option<&str> = prod.then_some("careful");
    let mut reviewed = Vec::new();
    for area in ["security", "perf"] {
        let ok = ask!(confirm(format!("{area} in {env}?")))
            .ok()
            .unwrap_or(false);
        reviewed.push((area, ok));
    }
    let tier = match env {
        "production" => "gold",
        _ => "bronze",
    };
    let _ = ask!(confirm("done?"));
    format!("{env} {tier} {label:?} {reviewed:?}")
}

#[tokio::test]
async fn string_literals_are_kept_without_copies() {
    let flow = drive(&environments, json!({"prod": true}), |_, _, _| yes())
        .await
        .unwrap();
    assert_eq!(
        text(&flow.output),
        r#"production gold Some("careful") [("security", true), ("perf", true)]"#
    );
    let flow = drive(&environments, json!({"prod": false}), |_, _, _| decline())
        .await
        .unwrap();
    assert_eq!(
        text(&flow.output),
        r#"staging bronze None [("security", false), ("perf", false)]"#
    );
}

/// Deferred initialization in brace-less match arms; a pure prefix before a suspension;
/// a parameter named like the tool.
#[mrtr::tool]
async fn search(search: String, base: u32) -> Result<String, ToolError> {
    let region;
    match search.as_str() {
        "aws" => region = ask!(text("AWS region?")).accepted()?,
        "gcp" => region = String::from("europe-west1"),
        _ => return Err(ToolError::new("unknown cloud")),
    }
    let mut totals = vec![1u32, 2];
    let i = 1;
    totals[i] += ask!(text("Add?")).accepted()?.len() as u32;
    let scaled = base * 2 + ask!(text("More?")).accepted()?.len() as u32;
    Ok(format!("{search} {region} {totals:?} {scaled}"))
}

#[tokio::test]
async fn brace_less_arms_pure_prefixes_and_colliding_names() {
    let flow = drive(
        &search,
        json!({"search": "aws", "base": 5}),
        |_, _, round| answer_text(["eu-west-1", "abc", "xy"][round]),
    )
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "aws eu-west-1 [1, 5] 12");
    let flow = drive(&search, json!({"search": "gcp", "base": 0}), |_, _, _| {
        answer_text("")
    })
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "gcp europe-west1 [1, 2] 0");
}

/// Shapes postcard cannot decode, kept through `AsJson` (without it, the tool is refused
/// before any round runs: `unreadable_types_are_refused_before_any_round_runs`).
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum TicketId {
    Number(u64),
    Key(String),
}

#[mrtr::tool]
async fn triage(urgent: bool) -> Result<String, ToolError> {
    let ticket = AsJson(json!({"id": 7, "labels": ["bug"]}));
    let id = AsJson(TicketId::Key("OPS-1".into()));
    let ok = ask!(confirm("File it?")).accepted()?;
    Ok(format!("{} {:?} {ok} {urgent}", ticket["labels"][0], *id))
}

#[tokio::test]
async fn as_json_stores_what_postcard_cannot() {
    use mrtr::machine::Machine as _;
    assert!(triage.unreadable_locals().is_empty());
    let flow = drive(&triage, json!({"urgent": true}), |_, _, _| yes())
        .await
        .unwrap();
    assert_eq!(text(&flow.output), r#""bug" Key("OPS-1") true true"#);
    let _ = Elicited::<bool>::Decline;
}

/// A `&'static str` from outside the body (a helper's literal) is not in the body's table.
fn helper_label(prod: bool) -> &'static str {
    if prod { "helper-prod" } else { "helper-dev" }
}

#[mrtr::tool]
async fn labelled(prod: bool) -> String {
    let label = helper_label(prod);
    let _ = ask!(confirm("Go?"));
    label.to_string()
}

#[tokio::test]
async fn a_static_str_from_a_helper_is_refused_with_the_fix() {
    let error = failure(drive(&labelled, json!({"prod": true}), |_, _, _| yes()).await);
    assert_eq!(error.code.0, -32603);
    assert!(
        error
            .message
            .contains("not a string literal of the tool's body"),
        "{}",
        error.message
    );
    assert!(!error.message.contains("helper-prod"), "{}", error.message);
}

/// A state past the token cap is reported as what it is.
#[mrtr::tool]
async fn hoard(size: usize) -> String {
    let blob = "x".repeat(size);
    let _ = ask!(confirm("Keep it?"));
    blob.len().to_string()
}

#[tokio::test]
async fn an_oversized_state_says_so() {
    let flow = drive(&hoard, json!({"size": 1000}), |_, _, _| yes())
        .await
        .unwrap();
    assert_eq!(text(&flow.output), "1000");
    let error = failure(drive(&hoard, json!({"size": 200_000}), |_, _, _| yes()).await);
    assert_eq!(error.code.0, -32602);
    assert!(
        error.message.contains("keeps between rounds is too large"),
        "{}",
        error.message
    );
    assert!(error.message.contains("limit"), "{}", error.message);
    assert!(
        error
            .message
            .contains("The largest is `blob` (200003 bytes)"),
        "{}",
        error.message
    );
}

/// Values postcard would lose or could not read back, kept across a suspension: each is
/// refused when the round seals (before anything is sent), naming the local and where in it.
mod kept_shapes {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use serde::{Deserialize, Serialize};

    /// Two handles to one buffer (an `Rc` would make the future non-`Send`, which rustc
    /// refuses; an `Arc` compiles, and without the check a write through `writer` after
    /// resuming would be lost to `log`).
    #[derive(Serialize, Deserialize)]
    pub struct Buffers {
        pub label: String,
        pub log: Arc<Mutex<Vec<String>>>,
        pub writer: Arc<Mutex<Vec<String>>>,
    }

    #[derive(Serialize, Deserialize)]
    pub struct Profile {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub nick: Option<String>,
        pub age: u8,
    }

    #[derive(Serialize, Deserialize)]
    pub struct Customer {
        pub name: String,
        #[serde(flatten)]
        pub attributes: BTreeMap<String, u32>,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(tag = "type")]
    pub enum Event {
        Push { branch: String },
    }

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    pub enum CustomerId {
        Number(u64),
        Handle(String),
    }
}

/// Values postcard would lose, which only a value shows (two handles to one buffer, a
/// field left out): found in a made-up value of each state type, before any round runs.
#[mrtr::tool]
async fn keep_shape(shape: String) -> Result<String, ToolError> {
    use kept_shapes::*;
    SIDE_EFFECTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    match shape.as_str() {
        "rc" => {
            let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let buffers = Buffers {
                label: "x".into(),
                writer: log.clone(),
                log,
            };
            let _ = ask!(confirm("Go?"));
            buffers.writer.lock().unwrap().push(buffers.label.clone());
            Ok(buffers.log.lock().unwrap().len().to_string())
        }
        _ => {
            let profile = Profile { nick: None, age: 3 };
            let _ = ask!(confirm("Go?"));
            Ok(format!("{:?} {}", profile.nick, profile.age))
        }
    }
}

#[tokio::test]
async fn values_postcard_would_lose_are_refused_before_any_round_runs() {
    use mrtr::machine::Machine as _;
    let found: Vec<String> = keep_shape
        .unreadable_locals()
        .iter()
        .map(|local| local.to_string())
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("the local `buffers` cannot be kept across a suspension: `buffers.log` is an `Rc`/`Arc` handle"),
        "{}",
        found[0]
    );
    assert!(
        found[1].starts_with("the local `profile` cannot be kept across a suspension: `profile` leaves out its field `nick`"),
        "{}",
        found[1]
    );
    assert!(found[1].contains("AsJson"), "{}", found[1]);
    for shape in ["rc", "skip"] {
        let error = failure(drive(&keep_shape, json!({"shape": shape}), |_, _, _| yes()).await);
        assert_eq!(error.code.0, -32603, "{shape}");
        assert!(
            error.message.contains("the local `buffers`"),
            "{}",
            error.message
        );
    }
    assert_eq!(SIDE_EFFECTS.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// Types postcard could never read back, whatever their values: the tool is refused before
/// any round runs (by `build()`, and by the test harness), naming each local.
#[mrtr::tool]
async fn keep_unreadable(shape: String) -> Result<String, ToolError> {
    use kept_shapes::*;
    SIDE_EFFECTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    match shape.as_str() {
        "flatten" => {
            let customer = Customer {
                name: "a".into(),
                attributes: Default::default(),
            };
            let _ = ask!(confirm("Go?"));
            Ok(format!("{} {}", customer.name, customer.attributes.len()))
        }
        "tagged" => {
            let event = Event::Push {
                branch: "main".into(),
            };
            let _ = ask!(confirm("Go?"));
            let Event::Push { branch } = event;
            Ok(branch)
        }
        "untagged" => {
            let count = 2u8;
            let id = CustomerId::Handle("ops".into());
            let _ = ask!(confirm("Go?"));
            Ok(format!("{count} {}", matches!(id, CustomerId::Number(_))))
        }
        _ => {
            let ticket = json!({"id": 7});
            let _ = ask!(confirm("Go?"));
            Ok(ticket.to_string())
        }
    }
}

/// Rounds of `keep_shape` and `keep_unreadable` that ran (none may).
static SIDE_EFFECTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[tokio::test]
async fn unreadable_types_are_refused_before_any_round_runs() {
    use mrtr::machine::Machine as _;
    let found: Vec<String> = keep_unreadable
        .unreadable_locals()
        .iter()
        .map(|local| local.local.clone())
        .collect();
    assert_eq!(found, ["customer", "event", "id", "ticket"]);

    let error = mrtr::server::McpServer::builder("shapes")
        .keys(mrtr::token::KeyRing::generate_process_local().unwrap())
        .tool(keep_unreadable)
        .build()
        .err()
        .expect("build() refuses the tool");
    let message = error.to_string();
    assert!(
        message.starts_with(
            "`keep_unreadable`: the local `customer` cannot be kept across a suspension"
        ),
        "{message}"
    );
    assert!(message.contains("AsJson"), "{message}");

    for shape in ["flatten", "tagged", "untagged", "json"] {
        let error =
            failure(drive(&keep_unreadable, json!({"shape": shape}), |_, _, _| yes()).await);
        assert_eq!(error.code.0, -32603, "{shape}");
        assert!(
            error.message.contains("the local `customer`"),
            "{}",
            error.message
        );
    }
    assert_eq!(SIDE_EFFECTS.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema, PartialEq)]
struct Service {
    name: String,
    replicas: u32,
}

/// Harder loop shapes: nested snapshot loops, labeled `continue` out of the inner one,
/// `break` and early `return` inside, matching on a derived binding with a suspension in
/// an arm, struct items by reference, windows, skip, rev, an owned HashMap, drain.
#[mrtr::tool]
async fn rollout(services: Vec<Service>, regions: Vec<String>, stop_at: String) -> String {
    let mut log = Vec::new();
    'service: for (i, service) in services.iter().enumerate().skip(1) {
        for region in regions.iter().rev() {
            if region == "skip" {
                continue 'service;
            }
            let ok = ask!(confirm(format!(
                "{} x{} in {region}?",
                service.name, service.replicas
            )))
            .ok()
            .unwrap_or(false);
            log.push(format!("{i}:{}@{region}={ok}", service.name));
            if service.name == stop_at {
                break 'service;
            }
        }
    }
    for pair in services.windows(2) {
        match pair[0].replicas.cmp(&pair[1].replicas) {
            std::cmp::Ordering::Less => {
                let why = ask!(text(format!("Why grow {}?", pair[1].name)))
                    .ok()
                    .unwrap_or_default();
                log.push(format!("grow {} {why}", pair[1].name));
            }
            _ => log.push(format!("keep {}", pair[0].name)),
        }
    }
    let mut owned: HashMap<String, u32> = services
        .iter()
        .map(|s| (s.name.clone(), s.replicas))
        .collect();
    let mut total = 0;
    for (_name, replicas) in owned.drain() {
        let _ = ask!(confirm("count?"));
        total += replicas;
    }
    log.push(format!("total {total} left {}", owned.len()));
    for service in &services {
        if service.replicas == 0 {
            let _ = ask!(confirm(format!("{} is empty; abort?", service.name)));
            return format!("aborted at {} after {}", service.name, log.join(";"));
        }
    }
    log.join(";")
}

fn rollout_plain(services: &[Service], regions: &[String], stop_at: &str) -> String {
    let mut log = Vec::new();
    'service: for (i, service) in services.iter().enumerate().skip(1) {
        for region in regions.iter().rev() {
            if region == "skip" {
                continue 'service;
            }
            log.push(format!("{i}:{}@{region}=true", service.name));
            if service.name == stop_at {
                break 'service;
            }
        }
    }
    for pair in services.windows(2) {
        match pair[0].replicas.cmp(&pair[1].replicas) {
            std::cmp::Ordering::Less => log.push(format!("grow {} because", pair[1].name)),
            _ => log.push(format!("keep {}", pair[0].name)),
        }
    }
    let total: u32 = services.iter().map(|s| s.replicas).sum();
    log.push(format!("total {total} left 0"));
    for service in services {
        if service.replicas == 0 {
            return format!("aborted at {} after {}", service.name, log.join(";"));
        }
    }
    log.join(";")
}

#[tokio::test]
async fn nested_labeled_and_early_exit_loops_over_borrowed_items() {
    let service = |name: &str, replicas| Service {
        name: name.into(),
        replicas,
    };
    let cases = [
        (
            vec![
                service("a", 1),
                service("b", 2),
                service("c", 3),
                service("d", 1),
            ],
            vec!["eu".to_string(), "us".to_string()],
            "c",
        ),
        (
            vec![service("a", 2), service("b", 1), service("c", 0)],
            vec!["eu".to_string(), "skip".to_string(), "us".to_string()],
            "none",
        ),
    ];
    for (services, regions, stop_at) in cases {
        let flow = drive(
            &rollout,
            json!({"services": services, "regions": regions, "stop_at": stop_at}),
            |_, request, _| {
                if message(request).starts_with("Why") {
                    answer_text("because")
                } else {
                    yes()
                }
            },
        )
        .await
        .unwrap();
        assert_eq!(
            text(&flow.output),
            rollout_plain(&services, &regions, stop_at)
        );
    }
}
