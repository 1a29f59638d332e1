//! Drives the cluster test tool `steps` (see `mrtr_bench::cluster`) with the real client
//! driver, `mrtr::client::MrtrClient`, over Streamable HTTP, and prints one JSON summary.
//!
//! ```sh
//! cluster-load run --url http://127.0.0.1:18080/mcp --flows 1000 --concurrency 32 --prefix a
//! cluster-load replay --url-a http://127.0.0.1:18081/mcp --url-b http://127.0.0.1:18082/mcp \
//!     --effects run/effects.txt --prefix b
//! cluster-load effects --file run/effects.txt --prefix a --flows 1000
//! ```
//! `run` answers every question from the flow id, records the instance that served each
//! round (`_meta["io.mrtr/instance"]`) and checks every result's answers; `replay` presents
//! one flow's last round twice to two nodes and checks the responses are identical and the
//! round's code ran once; `effects` counts the effects file's lines per (flow, round). Each
//! exits non-zero when its checks fail.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use mrtr::client::{
    CallOutput, CallTarget, ClientError, DriverConfig, HandlerError, InputHandlers, MrtrClient,
    PendingCall, RetryPolicy, RetryReason, RoundObserver, RoundOutcome,
};
use mrtr::rmcp::model::{
    CallToolResult, ElicitResult, ElicitationAction, InputResponses, MetaObject,
};
use mrtr::rmcp::transport::StreamableHttpClientTransport;
use mrtr_bench::cluster::{FlowResult, INSTANCE_META_KEY, QUESTIONS, TOOL_NAME, answer, question};
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Parser)]
#[command(about = "Drive the mrtr cluster test tool through nginx or straight to nodes")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run flows at a fixed concurrency and print a JSON summary.
    Run(RunArgs),
    /// Present one flow's last round twice to two nodes (sequentially, then concurrently).
    Replay(ReplayArgs),
    /// Count the effects file's lines per (flow, round) for flows with a prefix.
    Effects(EffectsArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// The MCP endpoint (nginx, or one node).
    #[arg(long)]
    url: String,
    /// How many flows to run (ignored with --duration).
    #[arg(long, default_value_t = 1000)]
    flows: usize,
    /// Start flows for this many seconds instead of a fixed number.
    #[arg(long)]
    duration: Option<f64>,
    /// Stop starting flows once this file exists (with --duration as the upper bound): a
    /// script ends the load when its restarts are done.
    #[arg(long)]
    stop_file: Option<PathBuf>,
    /// Flows in flight at once.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Flow ids are PREFIX-0, PREFIX-1, ...; one prefix per run keeps runs apart in the
    /// effects file.
    #[arg(long)]
    prefix: String,
    /// Most requests for one flow (restarts after a deploy add rounds).
    #[arg(long, default_value_t = 40)]
    max_rounds: usize,
    /// Longest one flow may take, in seconds.
    #[arg(long, default_value_t = 60.0)]
    flow_budget: f64,
    /// Exit non-zero when more flows than this failed.
    #[arg(long, default_value_t = 0)]
    max_failed: usize,
    /// Most times the driver re-sends one request that failed in transit (a lost
    /// connection, a 502/503/504, a retryable JSON-RPC error).
    #[arg(long, default_value_t = 8)]
    retries: u32,
    /// Longest pause between two attempts, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    max_backoff_ms: u64,
    /// Also re-send a first call that may have reached a node (its first round may then
    /// run twice: it has no state yet, so the ledger cannot cover it).
    #[arg(long)]
    retry_first_calls: bool,
    /// Exit non-zero when fewer than this share of completed flows had rounds served by
    /// more than one instance.
    #[arg(long, default_value_t = 0.0)]
    min_spread: f64,
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// One node's MCP endpoint.
    #[arg(long)]
    url_a: String,
    /// Another node's MCP endpoint.
    #[arg(long)]
    url_b: String,
    /// The effects file the nodes append to.
    #[arg(long)]
    effects: PathBuf,
    /// Flow id prefix.
    #[arg(long)]
    prefix: String,
}

#[derive(clap::Args)]
struct EffectsArgs {
    /// The effects file.
    #[arg(long)]
    file: PathBuf,
    /// Count flows whose id starts with `PREFIX-`.
    #[arg(long)]
    prefix: String,
    /// Expect exactly this many flows, each with every round (none: not checked).
    #[arg(long)]
    flows: Option<usize>,
    /// Expect every flow in the file to have every round (for runs of unknown length).
    #[arg(long)]
    all_complete: bool,
    /// Exit non-zero when more (flow, round) pairs than this appear more than once.
    #[arg(long, default_value_t = 0)]
    max_duplicates: usize,
}

#[tokio::main]
async fn main() -> ExitCode {
    let outcome = match Cli::parse().command {
        Command::Run(args) => run(args).await,
        Command::Replay(args) => replay(args).await,
        Command::Effects(args) => effects(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cluster-load: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Answers every form with `answer(flow, message)` in its single `text` field.
fn handlers_for(flow: &str) -> InputHandlers {
    let flow = flow.to_owned();
    InputHandlers::new().on_elicit(move |form| {
        let reply = answer(&flow, &form.message);
        async move {
            let mut result = ElicitResult::new(ElicitationAction::Accept);
            result.content = Some(json!({ "text": reply }));
            Ok::<_, HandlerError>(result)
        }
    })
}

async fn connect(url: &str) -> Result<MrtrClient, String> {
    MrtrClient::connect(
        StreamableHttpClientTransport::from_uri(url.to_owned()),
        handlers_for("connect"),
    )
    .await
    .map_err(|error| format!("cannot connect to {url}: {error}"))
}

fn instance_of(meta: Option<&MetaObject>) -> String {
    meta.and_then(|meta| meta.0.get(INSTANCE_META_KEY))
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned()
}

/// Which (variant, question number) `message` is, for `flow`.
fn identify(flow: &str, message: &str) -> Option<(u8, u32)> {
    (1..=2u8)
        .flat_map(|variant| (1..=QUESTIONS).map(move |number| (variant, number)))
        .find(|&(variant, number)| question(variant, number, flow) == message)
}

/// What one flow's rounds looked like, filled in by the driver's observer.
#[derive(Debug, Default)]
struct FlowTrace {
    instances: Vec<String>,
    last_question: u32,
    restarts: usize,
    retries: BTreeMap<String, usize>,
    unknown_question: Option<String>,
}

struct Tracer {
    flow: String,
    trace: Arc<Mutex<FlowTrace>>,
}

impl RoundObserver for Tracer {
    fn retrying(&self, _: &PendingCall, _: u32, reason: &RetryReason, _: Duration) {
        let mut trace = self.trace.lock().expect("trace lock");
        *trace.retries.entry(retry_kind(reason)).or_default() += 1;
    }

    fn input_required(&self, pending: &PendingCall) {
        let mut trace = self.trace.lock().expect("trace lock");
        trace.instances.push(instance_of(pending.meta.as_ref()));
        for request in pending.input_requests.values() {
            let wire = serde_json::to_value(request).unwrap_or_default();
            let message = wire["params"]["message"].as_str().unwrap_or_default();
            match identify(&self.flow, message) {
                Some((_, number)) => {
                    // Asked an earlier (or the same) question again: the flow restarted.
                    if number <= trace.last_question {
                        trace.restarts += 1;
                    }
                    trace.last_question = number;
                }
                None => trace.unknown_question = Some(message.to_owned()),
            }
        }
    }
}

/// A retry's reason without the per-request detail, to group by.
fn retry_kind(reason: &RetryReason) -> String {
    let text = reason.to_string();
    match text.find(':') {
        Some(end) => text[..end].to_owned(),
        None => text,
    }
}

fn result_text(result: &CallToolResult) -> Option<&str> {
    result
        .content
        .iter()
        .find_map(|content| content.as_text().map(|text| text.text.as_str()))
}

/// A failure's reason, short enough to group by.
fn reason(error: &ClientError) -> String {
    match error {
        ClientError::Server(data) => format!("server error {}: {}", data.code.0, data.message),
        ClientError::ConnectionLost { .. } => "connection lost".into(),
        ClientError::RoundLimit { .. } => "round limit".into(),
        ClientError::BudgetExceeded { .. } => "flow budget exceeded".into(),
        ClientError::RetriesExhausted { last, .. } => {
            format!("retries exhausted; last: {}", reason(last))
        }
        other => {
            let text = other.to_string();
            text.chars().take(120).collect()
        }
    }
}

struct FlowOutcome {
    flow: String,
    trace: FlowTrace,
    result: Result<u8, String>,
}

async fn one_flow(shared: &MrtrClient, config: &DriverConfig, flow: String) -> FlowOutcome {
    let trace = Arc::new(Mutex::new(FlowTrace::default()));
    let client = MrtrClient::from_peer(shared.peer().clone(), handlers_for(&flow))
        .with_config(config.clone())
        .with_observer(Tracer {
            flow: flow.clone(),
            trace: trace.clone(),
        });
    let arguments = json!({ "flow": flow }).as_object().cloned();
    let called = client.call(CallTarget::tool(TOOL_NAME, arguments)).await;
    let mut trace = std::mem::take(&mut *trace.lock().expect("trace lock"));
    let result = match called {
        Ok(CallOutput::Tool(result)) => {
            trace.instances.push(instance_of(result.meta.as_ref()));
            check_result(&flow, &result)
        }
        Ok(_) => Err("not a tool result".into()),
        Err(error) => Err(reason(&error)),
    };
    let result = match (&trace.unknown_question, result) {
        (Some(message), _) => Err(format!("asked a question of no variant: {message}")),
        (None, result) => result,
    };
    FlowOutcome {
        flow,
        trace,
        result,
    }
}

/// The variant that completed the flow, when its result checks.
fn check_result(flow: &str, result: &CallToolResult) -> Result<u8, String> {
    if result.is_error == Some(true) {
        return Err(format!("tool error: {}", result_text(result).unwrap_or("")));
    }
    let text = result_text(result).ok_or("a result without text")?;
    let parsed: FlowResult = serde_json::from_str(text)
        .map_err(|error| format!("result is not a FlowResult: {error}"))?;
    parsed.check(flow)?;
    Ok(parsed.variant)
}

#[derive(Debug, Default, Serialize)]
struct RunSummary {
    flows: usize,
    ok: usize,
    failed: usize,
    failures: BTreeMap<String, usize>,
    failed_flows_sample: Vec<String>,
    completed_by_variant: BTreeMap<u8, usize>,
    rounds_per_instance: BTreeMap<String, usize>,
    flows_on_several_instances: usize,
    restarts: usize,
    flows_restarted: usize,
    retries: BTreeMap<String, usize>,
    seconds: f64,
    flows_per_second: f64,
}

async fn run(args: RunArgs) -> Result<(), String> {
    if args.concurrency == 0 {
        return Err("--concurrency must be at least 1".into());
    }
    let shared = Arc::new(connect(&args.url).await?);
    let config = DriverConfig::default()
        .with_max_rounds(args.max_rounds)
        .with_budget(Some(Duration::from_secs_f64(args.flow_budget)))
        .with_retries(
            RetryPolicy::default()
                .with_max_retries(args.retries)
                .with_max_backoff(Duration::from_millis(args.max_backoff_ms))
                .retry_first_calls(args.retry_first_calls),
        );
    let started = Instant::now();
    let deadline = args
        .duration
        .map(|secs| started + Duration::from_secs_f64(secs));
    let next = Arc::new(AtomicUsize::new(0));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    for _ in 0..args.concurrency {
        let (shared, config, next, outcomes) = (
            shared.clone(),
            config.clone(),
            next.clone(),
            outcomes.clone(),
        );
        let (prefix, limit, stop_file) = (args.prefix.clone(), args.flows, args.stop_file.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let more = match deadline {
                    Some(deadline) => Instant::now() < deadline,
                    None => index < limit,
                } && !stop_file.as_ref().is_some_and(|file| file.exists());
                if !more {
                    break;
                }
                let outcome = one_flow(&shared, &config, format!("{prefix}-{index}")).await;
                outcomes.lock().expect("outcomes lock").push(outcome);
            }
        }));
    }
    for worker in workers {
        worker
            .await
            .map_err(|error| format!("a worker panicked: {error}"))?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let outcomes = std::mem::take(&mut *outcomes.lock().expect("outcomes lock"));
    let mut summary = RunSummary {
        flows: outcomes.len(),
        seconds,
        flows_per_second: outcomes.len() as f64 / seconds,
        ..RunSummary::default()
    };
    for outcome in &outcomes {
        for instance in &outcome.trace.instances {
            *summary
                .rounds_per_instance
                .entry(instance.clone())
                .or_default() += 1;
        }
        summary.restarts += outcome.trace.restarts;
        for (kind, count) in &outcome.trace.retries {
            *summary.retries.entry(kind.clone()).or_default() += count;
        }
        summary.flows_restarted += usize::from(outcome.trace.restarts > 0);
        match &outcome.result {
            Ok(variant) => {
                summary.ok += 1;
                *summary.completed_by_variant.entry(*variant).or_default() += 1;
                let first = outcome.trace.instances.first();
                if outcome.trace.instances.iter().any(|i| Some(i) != first) {
                    summary.flows_on_several_instances += 1;
                }
            }
            Err(reason) => {
                summary.failed += 1;
                *summary.failures.entry(reason.clone()).or_default() += 1;
                if summary.failed_flows_sample.len() < 5 {
                    summary.failed_flows_sample.push(outcome.flow.clone());
                }
            }
        }
    }
    println!(
        "{}",
        serde_json::to_string(&summary).expect("the summary serializes")
    );
    if summary.failed > args.max_failed {
        return Err(format!(
            "{} flow(s) failed (at most {} allowed)",
            summary.failed, args.max_failed
        ));
    }
    if summary.flows == 0 {
        return Err("no flow ran".into());
    }
    let spread = summary.flows_on_several_instances as f64 / summary.ok.max(1) as f64;
    if spread < args.min_spread {
        return Err(format!(
            "only {:.0}% of flows had rounds on more than one instance (at least {:.0}% expected)",
            spread * 100.0,
            args.min_spread * 100.0
        ));
    }
    Ok(())
}

/// Runs `flow` on `client` up to its last round: the pending call and its answers.
async fn to_last_round(
    client: &MrtrClient,
    flow: &str,
) -> Result<(PendingCall, InputResponses), String> {
    let arguments = json!({ "flow": flow }).as_object().cloned();
    let mut step = client
        .start(CallTarget::tool(TOOL_NAME, arguments))
        .await
        .map_err(|error| format!("{flow}: first round: {error}"))?;
    loop {
        let RoundOutcome::InputRequired(pending) = step else {
            return Err(format!("{flow} completed before its last round"));
        };
        let answers = client
            .answer(&pending)
            .await
            .map_err(|error| format!("{flow}: answering: {error}"))?;
        if pending.round as usize == QUESTIONS as usize {
            return Ok((pending, answers));
        }
        step = client
            .resume(&pending, answers)
            .await
            .map_err(|error| format!("{flow}: round {}: {error}", pending.round + 1))?;
    }
}

fn completed(outcome: Result<RoundOutcome, ClientError>, node: &str) -> Result<Value, String> {
    match outcome {
        Ok(RoundOutcome::Complete(CallOutput::Tool(result))) => {
            serde_json::to_value(&result).map_err(|error| error.to_string())
        }
        Ok(_) => Err(format!("{node} did not complete the flow")),
        Err(error) => Err(format!("{node}: {error}")),
    }
}

fn effect_count(effects: &PathBuf, flow: &str, round: u32) -> Result<usize, String> {
    let text = std::fs::read_to_string(effects)
        .map_err(|error| format!("cannot read {}: {error}", effects.display()))?;
    let round = round.to_string();
    Ok(text
        .lines()
        .filter(|line| {
            let mut fields = line.split(' ');
            fields.next() == Some(flow) && fields.next() == Some(round.as_str())
        })
        .count())
}

async fn replay(args: ReplayArgs) -> Result<(), String> {
    let last_round = QUESTIONS + 1;
    let mut report = serde_json::Map::new();
    let mut problems = Vec::new();
    for concurrent in [false, true] {
        let mode = if concurrent {
            "concurrent"
        } else {
            "sequential"
        };
        let flow = format!("{}-{mode}", args.prefix);
        let a = connect(&args.url_a).await?;
        let a = MrtrClient::from_peer(a.peer().clone(), handlers_for(&flow));
        let b = connect(&args.url_b).await?;
        let b = MrtrClient::from_peer(b.peer().clone(), handlers_for(&flow));
        let (pending, answers) = to_last_round(&a, &flow).await?;
        let (first, second) = if concurrent {
            tokio::join!(
                a.resume(&pending, answers.clone()),
                b.resume(&pending, answers.clone())
            )
        } else {
            let first = a.resume(&pending, answers.clone()).await;
            (first, b.resume(&pending, answers.clone()).await)
        };
        let first = completed(first, "node a")?;
        let second = completed(second, "node b")?;
        let identical = first == second;
        let ran = effect_count(&args.effects, &flow, last_round)?;
        if !identical {
            problems.push(format!(
                "{mode}: the two responses differ:\n  a: {first}\n  b: {second}"
            ));
        }
        if ran != 1 {
            problems.push(format!(
                "{mode}: the last round's code ran {ran} times (once expected)"
            ));
        }
        // The same round with other answers is refused: its outcome is already recorded.
        let mut other = answers.clone();
        for value in other.values_mut() {
            *value = json!({"action": "accept", "content": {"text": "something else"}});
        }
        let changed = match b.resume(&pending, other).await {
            Err(ClientError::Server(data)) => format!("error {}", data.code.0),
            Err(error) => format!("{error}"),
            Ok(_) => "accepted".to_owned(),
        };
        if changed != "error -32602" {
            problems.push(format!(
                "{mode}: other answers for the recorded round: {changed} (error -32602 expected)"
            ));
        }
        report.insert(
            mode.to_owned(),
            json!({
                "flow": flow,
                "identical": identical,
                "last_round_ran": ran,
                "served_by": [instance_of_value(&first), instance_of_value(&second)],
                "other_answers": changed,
            }),
        );
    }
    println!("{}", Value::Object(report));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn instance_of_value(result: &Value) -> Value {
    result["_meta"][INSTANCE_META_KEY].clone()
}

#[derive(Debug, Serialize)]
struct EffectsSummary {
    flows: usize,
    lines: usize,
    complete_flows: usize,
    duplicated_rounds: usize,
    lines_per_instance: BTreeMap<String, usize>,
    lines_per_variant: BTreeMap<String, usize>,
}

fn effects(args: EffectsArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|error| format!("cannot read {}: {error}", args.file.display()))?;
    let prefix = format!("{}-", args.prefix);
    let mut per_round: HashMap<(String, u32), usize> = HashMap::new();
    let mut summary = EffectsSummary {
        flows: 0,
        lines: 0,
        complete_flows: 0,
        duplicated_rounds: 0,
        lines_per_instance: BTreeMap::new(),
        lines_per_variant: BTreeMap::new(),
    };
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [flow, round, instance, variant] = fields[..] else {
            return Err(format!("a malformed effects line: {line:?}"));
        };
        if !flow.starts_with(&prefix) {
            continue;
        }
        let round: u32 = round
            .parse()
            .map_err(|_| format!("a malformed effects line: {line:?}"))?;
        summary.lines += 1;
        *summary
            .lines_per_instance
            .entry(instance.to_owned())
            .or_default() += 1;
        *summary
            .lines_per_variant
            .entry(variant.to_owned())
            .or_default() += 1;
        *per_round.entry((flow.to_owned(), round)).or_default() += 1;
    }
    let mut rounds_of: HashMap<&str, usize> = HashMap::new();
    for ((flow, _), count) in &per_round {
        *rounds_of.entry(flow.as_str()).or_default() += 1;
        summary.duplicated_rounds += usize::from(*count > 1);
    }
    summary.flows = rounds_of.len();
    summary.complete_flows = rounds_of
        .values()
        .filter(|rounds| **rounds == QUESTIONS as usize + 1)
        .count();
    println!(
        "{}",
        serde_json::to_string(&summary).expect("the summary serializes")
    );
    let mut problems = Vec::new();
    if summary.duplicated_rounds > args.max_duplicates {
        problems.push(format!(
            "{} (flow, round) pairs ran more than once (at most {} allowed)",
            summary.duplicated_rounds, args.max_duplicates
        ));
    }
    if let Some(flows) = args.flows
        && (summary.flows != flows || summary.complete_flows != flows)
    {
        problems.push(format!(
            "{} flows in the effects file, {} with every round ({flows} expected)",
            summary.flows, summary.complete_flows
        ));
    }
    if args.all_complete && summary.complete_flows != summary.flows {
        problems.push(format!(
            "{} of {} flows lack a round in the effects file",
            summary.flows - summary.complete_flows,
            summary.flows
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}
