//! Soak driver for `scripts/soak`: full `deploy_wizard` flows (four rounds each) against
//! a showcase server at concurrency N, while holding M stalled connections open (half
//! stop inside the request head, half inside the body; each one the server closes is
//! opened again). Prints requests, errors and the server's RSS at the start, the middle
//! and the end.
//!
//! ```sh
//! cargo run --release --example soak -- --url http://127.0.0.1:8080/mcp --server-pid 1234
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[derive(Parser)]
#[command(about = "Soak a showcase server: full flows plus stalled connections")]
struct Options {
    /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
    #[arg(long)]
    url: String,
    /// The server's PID, to read its RSS from /proc.
    #[arg(long)]
    server_pid: u32,
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Flows driven concurrently.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Stalled connections held open.
    #[arg(long, default_value_t = 200)]
    stalled: usize,
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    flows: AtomicU64,
    errors: AtomicU64,
    stalls_opened: AtomicU64,
    stalls_closed_by_server: AtomicU64,
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

fn report(label: &str, started: Instant, counters: &Counters, pid: u32) {
    println!(
        "{label:>6} t={:>5.1}s requests={} flows={} errors={} stalled_opened={} stalled_closed_by_server={} server_rss={:.1} MiB",
        started.elapsed().as_secs_f64(),
        counters.requests.load(Ordering::Relaxed),
        counters.flows.load(Ordering::Relaxed),
        counters.errors.load(Ordering::Relaxed),
        counters.stalls_opened.load(Ordering::Relaxed),
        counters.stalls_closed_by_server.load(Ordering::Relaxed),
        rss_kib(pid) as f64 / 1024.0,
    );
}

/// One `tools/call deploy_wizard` round; `None` on any transport or protocol error.
async fn round(client: &reqwest::Client, url: &str, id: u64, extra: Value) -> Option<Value> {
    let mut params = json!({"name": "deploy_wizard", "arguments": {"service": "api"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    }});
    for (key, value) in extra.as_object()?.clone() {
        params[key] = value;
    }
    let response = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "deploy_wizard")
        .body(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                .to_string(),
        )
        .send()
        .await
        .ok()?;
    if response.status() != 200 {
        return None;
    }
    let body: Value = response.json().await.ok()?;
    body.get("result").cloned()
}

/// A whole flow: environment, confirmation, a bad version, a good one.
async fn flow(client: &reqwest::Client, url: &str, counters: &Counters) -> bool {
    let answers = [
        json!({"environment": {"action": "accept", "content": {"choice": "staging"}}}),
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}}),
        json!({"version": {"action": "accept", "content": {"text": "1.4"}}}),
        json!({"version": {"action": "accept", "content": {"text": "1.4.2"}}}),
    ];
    let mut state: Option<String> = None;
    for (index, answer) in std::iter::once(None)
        .chain(answers.into_iter().map(Some))
        .enumerate()
    {
        let extra = match (&state, answer) {
            (Some(state), Some(answer)) => json!({"requestState": state, "inputResponses": answer}),
            _ => json!({}),
        };
        counters.requests.fetch_add(1, Ordering::Relaxed);
        let Some(result) = round(client, url, index as u64 + 1, extra).await else {
            return false;
        };
        match result["resultType"].as_str() {
            Some("input_required") => state = result["requestState"].as_str().map(str::to_string),
            Some("complete") => {
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                return index == 4 && text.contains("1.4.2");
            }
            _ => return false,
        }
    }
    false
}

/// Holds one stalled connection; opens a new one whenever the server closes it.
async fn stall(addr: String, in_body: bool, counters: Arc<Counters>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = TcpStream::connect(&addr).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        counters.stalls_opened.fetch_add(1, Ordering::Relaxed);
        let stalled: &[u8] = if in_body {
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":"
        } else {
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"
        };
        if stream.write_all(stalled).await.is_err() {
            continue;
        }
        let mut buffer = [0u8; 1024];
        // Wait for the server to give up on it (or for the run to end).
        loop {
            tokio::select! {
                read = tokio::io::AsyncReadExt::read(&mut stream, &mut buffer) => {
                    if matches!(read, Ok(0) | Err(_)) {
                        counters.stalls_closed_by_server.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
                () = tokio::time::sleep(Duration::from_millis(500)) => {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                }
            }
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let url = reqwest::Url::parse(&options.url)?;
    let addr = format!(
        "{}:{}",
        url.host_str().unwrap_or("127.0.0.1"),
        url.port().unwrap_or(80)
    );
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    report("start", started, &counters, options.server_pid);

    let mut stalls = Vec::new();
    for index in 0..options.stalled {
        stalls.push(tokio::spawn(stall(
            addr.clone(),
            index % 2 == 1,
            counters.clone(),
            stop.clone(),
        )));
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    let mut drivers = Vec::new();
    for _ in 0..options.concurrency {
        let (client, url, counters, stop) = (
            client.clone(),
            options.url.clone(),
            counters.clone(),
            stop.clone(),
        );
        drivers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if flow(&client, &url, &counters).await {
                    counters.flows.fetch_add(1, Ordering::Relaxed);
                } else {
                    counters.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let total = Duration::from_secs(options.seconds);
    tokio::time::sleep(total / 2).await;
    report("middle", started, &counters, options.server_pid);
    tokio::time::sleep(total - total / 2).await;
    stop.store(true, Ordering::Relaxed);
    for driver in drivers {
        let _ = driver.await;
    }
    report("end", started, &counters, options.server_pid);
    for stall in stalls {
        stall.abort();
    }
    let errors = counters.errors.load(Ordering::Relaxed);
    if errors > 0 {
        anyhow::bail!("{errors} flow(s) failed");
    }
    Ok(())
}
