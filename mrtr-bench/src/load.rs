//! The load generator: complete flows over Streamable HTTP with the 2026-07-28 wire, each
//! answered round by round and verified, and the server's CPU time and peak memory around
//! them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::proc_stats;
use crate::scenario::{Scenario, answer};

/// A flow that asks more than this many rounds is counted as failed (never a hang).
const MAX_ROUNDS: usize = 1000;

/// What a run drives.
///
/// ```
/// use mrtr_bench::load::LoadConfig;
/// let config = LoadConfig::new("http://127.0.0.1:9/mcp", "survey:5".parse().unwrap());
/// assert_eq!(config.concurrency, 8);
/// ```
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The MCP endpoint.
    pub url: String,
    /// Which flow.
    pub scenario: Scenario,
    /// Measured flows.
    pub flows: usize,
    /// Flows run before measuring (connections opened, caches warm); verified too.
    pub warmup: usize,
    /// Flows in flight at once.
    pub concurrency: usize,
    /// The server's process, for CPU time and peak RSS (none: not measured).
    pub server_pid: Option<u32>,
}

impl LoadConfig {
    /// 200 measured flows after 20 warm-up flows, 8 at a time, no server process.
    ///
    /// ```
    /// # use mrtr_bench::load::LoadConfig;
    /// assert_eq!(LoadConfig::new("u", mrtr_bench::scenario::Scenario::Wizard).flows, 200);
    /// ```
    pub fn new(url: impl Into<String>, scenario: Scenario) -> Self {
        LoadConfig {
            url: url.into(),
            scenario,
            flows: 200,
            warmup: 20,
            concurrency: 8,
            server_pid: None,
        }
    }
}

/// What a run measured; printed as one JSON line by `flowload`.
///
/// ```
/// # use mrtr_bench::load::LoadReport;
/// fn failed(report: &LoadReport) -> bool { report.failed_flows > 0 }
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    /// The scenario, as given (`survey:5`).
    pub scenario: String,
    /// Flows in flight at once.
    pub concurrency: usize,
    /// Measured flows that finished with the expected text.
    pub verified_flows: usize,
    /// Measured and warm-up flows that failed (an error, a wrong text, too many rounds).
    pub failed_flows: usize,
    /// The first failure's description.
    pub first_failure: Option<String>,
    /// HTTP requests per measured flow (mean).
    pub requests_per_flow: f64,
    /// Median `requestState` length over every round of every measured flow, in bytes.
    pub state_bytes_median: Option<usize>,
    /// Median `requestState` length of round k (index k - 1), in bytes.
    pub state_bytes_by_round: Vec<usize>,
    /// Server CPU time (user + system) per measured flow, in microseconds: from the
    /// scheduler's per-thread nanoseconds when every thread lived through the run, from
    /// `utime + stime` (10 ms clock ticks) otherwise.
    pub server_cpu_us_per_flow: Option<f64>,
    /// Server CPU time over the measured flows, in microseconds.
    pub server_cpu_us_total: Option<u64>,
    /// Of the server's CPU time per flow, the part in user mode (from clock ticks, so
    /// coarser than [`Self::server_cpu_us_per_flow`]).
    pub server_user_us_per_flow: Option<f64>,
    /// Of the server's CPU time per flow, the part in the kernel (from clock ticks).
    pub server_system_us_per_flow: Option<f64>,
    /// The server's peak resident set size since it started, in KiB.
    pub server_peak_rss_kib: Option<u64>,
    /// The anonymous part of the server's resident set after the measured flows (`RssAnon`:
    /// heap and stacks; the peak also counts the program's code pages it touched), in KiB.
    pub server_rss_anon_kib: Option<u64>,
    /// Wall-clock time of the measured flows, in seconds (for reading only).
    pub wall_seconds: f64,
}

/// One completed flow.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowRecord {
    /// HTTP requests it took.
    pub requests: usize,
    /// The `requestState` length of each round, in order.
    pub state_sizes: Vec<usize>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Drives one complete flow of `scenario`, answering every round, and verifies its result.
///
/// ```no_run
/// # async fn run() -> Result<(), String> {
/// let client = reqwest::Client::new();
/// let flow = mrtr_bench::load::drive_flow(&client, "http://127.0.0.1:18081/mcp", "survey:3".parse().unwrap()).await?;
/// assert_eq!(flow.requests, 4);
/// # Ok(()) }
/// ```
pub async fn drive_flow(
    client: &reqwest::Client,
    url: &str,
    scenario: Scenario,
) -> Result<FlowRecord, String> {
    let mut state_sizes = Vec::new();
    let mut retry: Option<(Value, String)> = None;
    for request_number in 1..=MAX_ROUNDS {
        let body = request_body(scenario, retry.take());
        let result = post(client, url, scenario, &body)
            .await
            .map_err(|e| format!("request {request_number}: {e}"))?;
        match next_retry(&result, state_sizes.len() + 1)
            .map_err(|e| format!("request {request_number}: {e}"))?
        {
            Some((responses, state)) => {
                state_sizes.push(state.len());
                retry = Some((responses, state));
            }
            None => {
                check_result(scenario, &result)
                    .map_err(|e| format!("request {request_number}: {e}"))?;
                return Ok(FlowRecord {
                    requests: request_number,
                    state_sizes,
                });
            }
        }
    }
    Err(format!("the flow asked more than {MAX_ROUNDS} rounds"))
}

/// The input requests of every round of one flow of `scenario` (each round's in key
/// order), answered as [`drive_flow`] answers them: what a server asks, to compare servers.
///
/// ```no_run
/// # async fn run() -> Result<(), String> {
/// let client = reqwest::Client::new();
/// let rounds = mrtr_bench::load::flow_questions(&client, "http://127.0.0.1:18081/mcp", "survey:2".parse().unwrap()).await?;
/// assert_eq!(rounds.len(), 2);
/// # Ok(()) }
/// ```
pub async fn flow_questions(
    client: &reqwest::Client,
    url: &str,
    scenario: Scenario,
) -> Result<Vec<Vec<Value>>, String> {
    let mut rounds = Vec::new();
    let mut retry = None;
    for request_number in 1..=MAX_ROUNDS {
        let result = post(client, url, scenario, &request_body(scenario, retry.take())).await?;
        match next_retry(&result, request_number)? {
            Some(next) => {
                let asked = result["inputRequests"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                rounds.push(asked.into_iter().map(|(_, request)| request).collect());
                retry = Some(next);
            }
            None => {
                check_result(scenario, &result)?;
                return Ok(rounds);
            }
        }
    }
    Err(format!("the flow asked more than {MAX_ROUNDS} rounds"))
}

/// The `tools/call` of `scenario`, retrying with `retry`'s answers and state when given.
fn request_body(scenario: Scenario, retry: Option<(Value, String)>) -> Value {
    let mut params = json!({
        "name": scenario.tool(),
        "arguments": scenario.arguments(),
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "flowload", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}},
        },
    });
    if let Some((responses, state)) = retry {
        params["inputResponses"] = responses;
        params["requestState"] = Value::String(state);
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// Posts one JSON-RPC request and returns its `result` (a JSON-RPC error is an `Err`).
async fn post(
    client: &reqwest::Client,
    url: &str,
    scenario: Scenario,
    body: &Value,
) -> Result<Value, String> {
    let response = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", scenario.tool())
        .body(body.to_string())
        .send()
        .await
        .map_err(|error| error.to_string())?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|error| format!("reading the body: {error}"))?;
    let mut reply: Value = serde_json::from_str(&text)
        .map_err(|_| format!("HTTP {status}, not a JSON body: {text:.200}"))?;
    if let Some(error) = reply.get("error") {
        return Err(format!("JSON-RPC error {error}"));
    }
    Ok(reply["result"].take())
}

/// For an `input_required` result, the answers to its requests (for round `round`) and
/// its state; `None` for any other result.
fn next_retry(result: &Value, round: usize) -> Result<Option<(Value, String)>, String> {
    if result["resultType"] != "input_required" {
        return Ok(None);
    }
    let state = result["requestState"]
        .as_str()
        .ok_or("input_required without requestState")?;
    let requests = result["inputRequests"]
        .as_object()
        .ok_or("input_required without inputRequests")?;
    let mut responses = serde_json::Map::new();
    for (key, request) in requests {
        responses.insert(key.clone(), answer(request, round)?);
    }
    Ok(Some((Value::Object(responses), state.to_string())))
}

fn check_result(scenario: Scenario, result: &Value) -> Result<(), String> {
    let text = result["content"][0]["text"].as_str();
    if result["isError"] == true || text != Some(scenario.expected_text().as_str()) {
        return Err(format!(
            "expected the text {:?}, got {result}",
            scenario.expected_text()
        ));
    }
    Ok(())
}

/// Runs `config.warmup` then `config.flows` flows, `config.concurrency` at a time.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use mrtr_bench::load::{LoadConfig, run};
/// let report = run(&LoadConfig::new("http://127.0.0.1:8080/mcp", "wizard".parse().unwrap())).await?;
/// println!("{}", serde_json::to_string(&report).unwrap());
/// # Ok(()) }
/// ```
pub async fn run(config: &LoadConfig) -> std::io::Result<LoadReport> {
    let client = client(config)?;
    let warmup = run_batch(&client, config, config.warmup).await;
    let meter = CpuMeter::start(config.server_pid)?;
    let started = Instant::now();
    let measured = run_batch(&client, config, config.flows).await;
    let wall_seconds = started.elapsed().as_secs_f64();
    let (server_cpu_us_total, spent) = meter.stop()?;
    let server_peak_rss_kib = config
        .server_pid
        .map(proc_stats::peak_rss_kib)
        .transpose()?;
    let server_rss_anon_kib = config
        .server_pid
        .map(proc_stats::rss_anon_kib)
        .transpose()?;

    let failures: Vec<String> = warmup
        .iter()
        .chain(&measured)
        .filter_map(|flow| flow.as_ref().err().cloned())
        .collect();
    let verified: Vec<&FlowRecord> = measured
        .iter()
        .filter_map(|flow| flow.as_ref().ok())
        .collect();
    let rounds = verified
        .iter()
        .map(|flow| flow.state_sizes.len())
        .max()
        .unwrap_or(0);
    let state_bytes_by_round = (0..rounds)
        .filter_map(|k| {
            median(
                verified
                    .iter()
                    .filter_map(|flow| flow.state_sizes.get(k).copied())
                    .collect(),
            )
        })
        .collect();
    let per_flow = |total: Option<u64>| {
        total
            .filter(|_| !verified.is_empty())
            .map(|total| total as f64 / verified.len() as f64)
    };
    Ok(LoadReport {
        scenario: config.scenario.to_string(),
        concurrency: config.concurrency,
        verified_flows: verified.len(),
        failed_flows: failures.len(),
        first_failure: failures.into_iter().next(),
        requests_per_flow: verified.iter().map(|flow| flow.requests).sum::<usize>() as f64
            / verified.len().max(1) as f64,
        state_bytes_median: median(
            verified
                .iter()
                .flat_map(|flow| flow.state_sizes.iter().copied())
                .collect(),
        ),
        state_bytes_by_round,
        server_cpu_us_per_flow: per_flow(server_cpu_us_total),
        server_user_us_per_flow: per_flow(spent.map(|(user, _)| user)),
        server_system_us_per_flow: per_flow(spent.map(|(_, system)| system)),
        server_cpu_us_total,
        server_peak_rss_kib,
        server_rss_anon_kib,
        wall_seconds,
    })
}

/// Runs `flows` flows with `config.concurrency` workers taking the next flow as they finish.
/// CPU µs in user and in system mode.
type UserSystem = (u64, u64);

/// The server's CPU time across a measured stretch.
struct CpuMeter {
    pid: Option<u32>,
    threads: Option<BTreeMap<u32, u64>>,
    split: Option<UserSystem>,
}

impl CpuMeter {
    fn start(pid: Option<u32>) -> std::io::Result<Self> {
        Ok(CpuMeter {
            pid,
            threads: pid.map(proc_stats::thread_cpu_nanos).transpose()?,
            split: pid.map(proc_stats::cpu_split_micros).transpose()?,
        })
    }

    /// CPU µs spent since `start` (`None` without a PID), and its (user, system) split.
    fn stop(self) -> std::io::Result<(Option<u64>, Option<UserSystem>)> {
        let threads = self.pid.map(proc_stats::thread_cpu_nanos).transpose()?;
        let split = self.pid.map(proc_stats::cpu_split_micros).transpose()?;
        let spent = self
            .split
            .zip(split)
            .map(|(before, after)| (after.0 - before.0, after.1 - before.1));
        // The scheduler's nanoseconds where every thread lived through the run; clock ticks
        // (10 ms each, 2-3 % of a short run) otherwise.
        let total = self
            .threads
            .zip(threads)
            .and_then(|(before, after)| proc_stats::cpu_micros_between(&before, &after))
            .or(spent.map(|(user, system)| user + system));
        Ok((total, spent))
    }
}

/// What [`replay`] measured; printed as one JSON line by `flowload --replay-request`.
///
/// ```
/// # use mrtr_bench::load::ReplayReport;
/// fn per_request(report: &ReplayReport) -> Option<f64> { report.server_cpu_us_per_request }
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// The scenario (`survey:20`).
    pub scenario: String,
    /// Which request of the flow was replayed (from 1; request k + 1 answers round k).
    pub request: usize,
    /// Replays in flight at once.
    pub concurrency: usize,
    /// Measured replays whose reply matched the first reply.
    pub verified_replays: usize,
    /// Replays (warm-up included) that failed.
    pub failed_replays: usize,
    /// The first failure's description.
    pub first_failure: Option<String>,
    /// The `requestState` length the replayed request carries (0 for the first call).
    pub state_bytes_in: usize,
    /// Server CPU time (user + system) per measured replay, in µs.
    pub server_cpu_us_per_request: Option<f64>,
    /// Wall-clock time of the measured replays, in seconds (for reading only).
    pub wall_seconds: f64,
}

/// The cost of request `request` of a flow on its own: drives one flow up to that request,
/// then sends exactly that request (same answers, same `requestState`) `config.flows` times
/// after `config.warmup` unmeasured ones, checking that every reply asks the same questions
/// (or gives the same final text) as the first. A server without a round ledger answers a
/// replayed round like the first time, so this is the cost of round `request - 1` at its
/// real state size.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use mrtr_bench::load::{LoadConfig, replay};
/// let config = LoadConfig::new("http://127.0.0.1:18081/mcp", "survey:20".parse().unwrap());
/// let round_20 = replay(&config, 21).await?;
/// println!("{:?}", round_20.server_cpu_us_per_request);
/// # Ok(()) }
/// ```
pub async fn replay(config: &LoadConfig, request: usize) -> std::io::Result<ReplayReport> {
    let client = client(config)?;
    let failed = |error: String| ReplayReport {
        scenario: config.scenario.to_string(),
        request,
        concurrency: config.concurrency,
        verified_replays: 0,
        failed_replays: 1,
        first_failure: Some(error),
        state_bytes_in: 0,
        server_cpu_us_per_request: None,
        wall_seconds: 0.0,
    };
    let (body, expected) = match reach_request(&client, config, request).await {
        Ok(reached) => reached,
        Err(error) => return Ok(failed(error)),
    };
    let state_bytes_in = body["params"]["requestState"].as_str().map_or(0, str::len);
    let body = Arc::new(body);
    let expected = Arc::new(expected);
    let warmup = replay_batch(&client, config, &body, &expected, config.warmup).await;
    let meter = CpuMeter::start(config.server_pid)?;
    let started = Instant::now();
    let measured = replay_batch(&client, config, &body, &expected, config.flows).await;
    let wall_seconds = started.elapsed().as_secs_f64();
    let (cpu_total, _) = meter.stop()?;
    let failures: Vec<String> = warmup
        .into_iter()
        .chain(measured.iter().cloned())
        .filter_map(Result::err)
        .collect();
    let verified = measured.iter().filter(|reply| reply.is_ok()).count();
    Ok(ReplayReport {
        scenario: config.scenario.to_string(),
        request,
        concurrency: config.concurrency,
        verified_replays: verified,
        failed_replays: failures.len(),
        first_failure: failures.into_iter().next(),
        state_bytes_in,
        server_cpu_us_per_request: cpu_total
            .filter(|_| verified > 0)
            .map(|total| total as f64 / verified as f64),
        wall_seconds,
    })
}

/// Drives a flow up to its `request`-th request: that request's body, and its reply.
async fn reach_request(
    client: &reqwest::Client,
    config: &LoadConfig,
    request: usize,
) -> Result<(Value, Value), String> {
    let scenario = config.scenario;
    let mut retry = None;
    for number in 1..request {
        let result = post(
            client,
            &config.url,
            scenario,
            &request_body(scenario, retry),
        )
        .await
        .map_err(|e| format!("request {number}: {e}"))?;
        retry = Some(next_retry(&result, number)?.ok_or_else(|| {
            format!("{scenario} ended at request {number}, before request {request}")
        })?);
    }
    let body = request_body(scenario, retry);
    let reply = post(client, &config.url, scenario, &body)
        .await
        .map_err(|e| format!("request {request}: {e}"))?;
    if next_retry(&reply, request)?.is_none() {
        check_result(scenario, &reply).map_err(|e| format!("request {request}: {e}"))?;
    }
    Ok((body, reply))
}

/// Whether a replay's reply is the first reply again: the same questions (its state has
/// a fresh nonce) or the same final result.
fn same_reply(reply: &Value, expected: &Value) -> Result<(), String> {
    let same = if expected["resultType"] == "input_required" {
        reply["resultType"] == "input_required"
            && reply["inputRequests"] == expected["inputRequests"]
            && reply["requestState"].is_string()
    } else {
        reply["content"] == expected["content"] && reply["isError"] == expected["isError"]
    };
    if same {
        Ok(())
    } else {
        Err(format!(
            "a replay answered {reply:.300}, the first reply was {expected:.300}"
        ))
    }
}

async fn replay_batch(
    client: &reqwest::Client,
    config: &LoadConfig,
    body: &Arc<Value>,
    expected: &Arc<Value>,
    count: usize,
) -> Vec<Result<(), String>> {
    let (client, url, scenario) = (client.clone(), config.url.clone(), config.scenario);
    let (body, expected) = (body.clone(), expected.clone());
    in_parallel(config.concurrency, count, move || {
        let (client, url, body, expected) =
            (client.clone(), url.clone(), body.clone(), expected.clone());
        async move {
            let reply = post(&client, &url, scenario, &body).await?;
            same_reply(&reply, &expected)
        }
    })
    .await
}

fn client(config: &LoadConfig) -> std::io::Result<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .tcp_nodelay(true)
        .pool_max_idle_per_host(config.concurrency)
        .build()
        .map_err(std::io::Error::other)
}

async fn run_batch(
    client: &reqwest::Client,
    config: &LoadConfig,
    flows: usize,
) -> Vec<Result<FlowRecord, String>> {
    let (client, url, scenario) = (client.clone(), config.url.clone(), config.scenario);
    in_parallel(config.concurrency, flows, move || {
        let (client, url) = (client.clone(), url.clone());
        async move { drive_flow(&client, &url, scenario).await }
    })
    .await
}

/// Runs `job` `count` times on `concurrency` tasks, each taking the next run when its last
/// one is done; the results in completion order per task.
async fn in_parallel<T, F, Fut>(concurrency: usize, count: usize, job: F) -> Vec<Result<T, String>>
where
    T: Send + 'static,
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<T, String>> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let (job, next) = (job.clone(), next.clone());
        workers.spawn(async move {
            let mut done = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < count {
                done.push(job().await);
            }
            done
        });
    }
    let mut results = Vec::with_capacity(count);
    while let Some(worker) = workers.join_next().await {
        match worker {
            Ok(done) => results.extend(done),
            Err(error) => results.push(Err(format!("a load worker stopped: {error}"))),
        }
    }
    results
}

fn median(mut values: Vec<usize>) -> Option<usize> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::{check_result, median};
    use crate::scenario::Scenario;
    use serde_json::json;

    #[test]
    fn only_the_exact_text_of_a_successful_result_verifies() {
        let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
        assert!(check_result(Scenario::Survey(2), &text("answer1,answer2")).is_ok());
        assert!(check_result(Scenario::Survey(2), &text("answer1,answer2,")).is_err());
        assert!(check_result(Scenario::Survey(2), &json!({"content": []})).is_err());
        let mut failed = text("answer1,answer2");
        failed["isError"] = json!(true);
        assert!(check_result(Scenario::Survey(2), &failed).is_err());
    }

    #[test]
    fn median_takes_the_middle_value() {
        assert_eq!(median(vec![5, 1, 3]), Some(3));
        assert_eq!(median(vec![]), None);
    }
}
