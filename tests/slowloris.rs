//! Slowloris with a concurrent legitimate client: 1,000 attacking connections from ten
//! loopback addresses (127.0.0.2 to 127.0.0.11) — three in four sending their request head slowly,
//! the rest declaring a body just under the 1 MiB cap and stalling before its end — are held
//! open while a legitimate client on 127.0.0.1 completes three-round MRTR flows. The
//! outcome is asserted: the legitimate flows complete; every attacker that is answered gets
//! `503` naming `max_connections_per_address` or `max_buffered_body_bytes`; no address
//! holds more than its cap and the stalled bodies never hold more than the budget; and the
//! budget is all given back once they leave. Latency and memory are printed (run with
//! `--nocapture`), never asserted.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mrtr::machine::Elicited;
use mrtr::server::McpServer;
use mrtr::server::http::{HttpServing, HttpStats};
use mrtr::token::KeyRing;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpSocket;
use tokio_util::sync::CancellationToken;

/// A bound so a broken server fails the test instead of hanging it; never asserted on.
const HANG_GUARD: Duration = Duration::from_secs(60);

const ATTACKERS: usize = 1000;
const ADDRESSES: usize = 10;
const PER_ADDRESS: usize = 64;
const BODY_CAP: usize = 1024 * 1024;
const BUDGET: usize = 64 * 1024 * 1024;
/// Flows the legitimate client runs, before and during the attack.
const FLOWS: usize = 10;

/// Three rounds: two questions, one after the other, then the result.
#[mrtr::tool]
async fn three_steps() -> String {
    let first = ask!(confirm("First step?"));
    let second = ask!(confirm("Second step?"));
    match (first, second) {
        (Elicited::Accept(true), Elicited::Accept(true)) => "both steps done".to_string(),
        _ => "stopped".to_string(),
    }
}

struct Served {
    addr: SocketAddr,
    stats: HttpStats,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve() -> Served {
    let server = McpServer::builder("slowloris")
        .keys(KeyRing::generate_process_local().unwrap())
        .tool(three_steps)
        .build()
        .expect("server builds");
    let bound = HttpServing::new(server)
        .shutdown_grace(Duration::from_secs(1))
        .max_body_bytes(BODY_CAP)
        .max_buffered_body_bytes(BUDGET)
        .max_connections_per_address(PER_ADDRESS)
        .per_address_includes_loopback(true)
        // Longer than the test: whatever the server holds, it holds for the whole attack.
        .header_read_timeout(Duration::from_secs(300))
        .body_timeout(Duration::from_secs(300))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind loopback");
    let addr = bound.local_addr();
    let stats = bound.stats();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    Served {
        addr,
        stats,
        stop: Some(stop),
    }
}

/// One legitimate three-round flow on `http`; the latency of each of its requests.
async fn flow(http: &reqwest::Client, addr: SocketAddr) -> Vec<Duration> {
    let mut params = json!({
        "name": "three_steps",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "legitimate", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    let mut latencies = Vec::new();
    for round in 0..3 {
        let body = json!({"jsonrpc": "2.0", "id": round, "method": "tools/call", "params": params});
        let started = Instant::now();
        let response = http
            .post(format!("http://{addr}/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "three_steps")
            .body(body.to_string())
            .send()
            .await
            .expect("the legitimate client is answered");
        assert_eq!(response.status(), 200);
        let reply: Value = response.json().await.expect("a JSON reply");
        latencies.push(started.elapsed());
        let result = &reply["result"];
        if round == 2 {
            assert_eq!(result["content"][0]["text"], "both steps done", "{reply}");
            return latencies;
        }
        assert_eq!(result["resultType"], "input_required", "{reply}");
        let answers: serde_json::Map<String, Value> = result["inputRequests"]
            .as_object()
            .expect("inputRequests")
            .keys()
            .map(|key| {
                let accept = json!({"action": "accept", "content": {"confirm": true}});
                (key.clone(), accept)
            })
            .collect();
        params["inputResponses"] = Value::Object(answers);
        params["requestState"] = result["requestState"].clone();
    }
    unreachable!("the flow ends in its third round")
}

/// How an attacking connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Still open and unanswered when the test stopped the attack.
    Held,
    /// Answered (the status line and the knob named, if any), or closed.
    Answered(String),
}

/// What an attacker sends before it stalls.
#[derive(Clone, Copy)]
enum Attack {
    /// Part of a request head.
    SlowHead,
    /// A whole head declaring a body just under the cap, and all of it but its end.
    StalledBody,
}

/// One attacker from `source`: connects, sends what `attack` sends, and waits until the
/// server answers or closes, or `stop`.
async fn attacker(
    source: IpAddr,
    server: SocketAddr,
    attack: Attack,
    stop: CancellationToken,
) -> Outcome {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(SocketAddr::new(source, 0))
        .expect("bind a loopback source");
    let Ok(stream) = socket.connect(server).await else {
        return Outcome::Answered("connect failed".into());
    };
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n",
        BODY_CAP - 1024
    );
    let (mut reader, mut writer) = stream.into_split();
    // Sends concurrently with reading, so an early answer is read before the server's
    // close turns further writes into a reset; then keeps the connection open.
    let writing = async move {
        let _ = match attack {
            Attack::SlowHead => writer.write_all(&head.as_bytes()[..40]).await,
            Attack::StalledBody => send_most_of_a_body(&mut writer, &head).await,
        };
        std::future::pending::<()>().await;
    };
    tokio::select! {
        outcome = answered(&mut reader) => outcome,
        () = writing => unreachable!("writing never ends"),
        () = stop.cancelled() => Outcome::Held,
    }
}

async fn send_most_of_a_body(
    stream: &mut (impl AsyncWrite + Unpin),
    head: &str,
) -> std::io::Result<()> {
    stream.write_all(head.as_bytes()).await?;
    let chunk = vec![b' '; 64 * 1024];
    let mut left = BODY_CAP - 1024 - 16;
    while left > 0 {
        let n = left.min(chunk.len());
        stream.write_all(&chunk[..n]).await?;
        left -= n;
    }
    Ok(())
}

/// Whatever the server sends until it closes, summarised: the status line and the knob it
/// names.
async fn answered(stream: &mut (impl AsyncRead + Unpin)) -> Outcome {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
        }
    }
    let text = String::from_utf8_lossy(&received);
    let status = text.lines().next().unwrap_or("closed").to_string();
    let knob = ["max_connections_per_address", "max_buffered_body_bytes"]
        .into_iter()
        .find(|knob| text.contains(knob))
        .unwrap_or("");
    Outcome::Answered(format!("{status} {knob}").trim().to_string())
}

/// This process's resident memory in KiB (server and attackers together).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Median and maximum, in milliseconds.
fn summary(mut latencies: Vec<Duration>) -> String {
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = latencies
        .get(latencies.len() / 2)
        .copied()
        .unwrap_or_default();
    let max = latencies.last().copied().unwrap_or_default();
    format!(
        "{} requests, median {:.1} ms, max {:.1} ms",
        latencies.len(),
        ms(median),
        ms(max)
    )
}

async fn legitimate_flows(addr: SocketAddr) -> Vec<Duration> {
    let http = reqwest::Client::builder()
        .timeout(HANG_GUARD)
        .build()
        .unwrap();
    let mut latencies = Vec::new();
    for _ in 0..FLOWS {
        latencies.extend(flow(&http, addr).await);
    }
    latencies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legitimate_client_completes_its_flows_while_1000_attackers_stall() {
    let served = serve().await;
    let rss_before = rss_kib();
    let baseline = legitimate_flows(served.addr).await;

    let stop = CancellationToken::new();
    let settled = Arc::new(AtomicUsize::new(0));
    let mut attackers = Vec::new();
    for i in 0..ATTACKERS {
        let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (i % ADDRESSES) as u8));
        // Three in four send their head slowly: more per address than its cap.
        let attack = if i % 4 != 0 {
            Attack::SlowHead
        } else {
            Attack::StalledBody
        };
        let (stop, settled, server) = (stop.clone(), settled.clone(), served.addr);
        let task = tokio::spawn(async move {
            let outcome = attacker(source, server, attack, stop).await;
            settled.fetch_add(1, Ordering::SeqCst);
            outcome
        });
        attackers.push((source, task));
    }
    // Until every address past its cap has been answered (the rest are held).
    tokio::time::timeout(HANG_GUARD, async {
        while settled.load(Ordering::SeqCst) < ATTACKERS - ADDRESSES * PER_ADDRESS {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("hang guard: the attackers past the per-address cap were never answered");

    // What the server holds per address, while the attack lasts. (An attacker that is still
    // in the listen backlog looks "held" from its side too, so the server's count is the
    // one the cap is about.)
    let mut most_per_address = 0;
    for i in 0..ADDRESSES {
        let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + i as u8));
        most_per_address = most_per_address.max(served.stats.connections_from(source));
    }
    let under_attack = legitimate_flows(served.addr).await;
    for i in 0..ADDRESSES {
        let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + i as u8));
        most_per_address = most_per_address.max(served.stats.connections_from(source));
    }
    let held_bytes = served.stats.buffered_body_bytes();
    let rss_attack = rss_kib();
    stop.cancel();
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    let mut held = std::collections::BTreeMap::<IpAddr, usize>::new();
    for (source, attacker) in attackers {
        match attacker.await.expect("an attacker task") {
            Outcome::Held => *held.entry(source).or_default() += 1,
            Outcome::Answered(answer) => *outcomes.entry(answer).or_default() += 1,
        }
    }
    eprintln!(
        "slowloris: baseline {}; under attack {}; attackers held {}, answered {outcomes:?}; \
         body bytes held {held_bytes}; RSS {rss_before} KiB before, {rss_attack} KiB under attack",
        summary(baseline),
        summary(under_attack.clone()),
        held.values().sum::<usize>(),
    );

    // Each address holds at most its cap; the stalled bodies at most the budget.
    assert!(
        most_per_address <= PER_ADDRESS,
        "an address holds {most_per_address} connections"
    );
    assert!(
        most_per_address > 0,
        "the attack was not counted per address"
    );
    assert!(held_bytes <= BUDGET, "{held_bytes} body bytes held");
    // Every answer is a 503 naming one of the two knobs (or, for an attacker still sending
    // when the server closed on it, the reset that can overtake the 503).
    for (answer, count) in &outcomes {
        let refused = answer == "HTTP/1.1 503 Service Unavailable max_connections_per_address"
            || answer == "HTTP/1.1 503 Service Unavailable max_buffered_body_bytes"
            || answer == "closed";
        assert!(refused, "{count} attackers got {answer:?}");
    }
    let by_budget = outcomes
        .iter()
        .filter(|(answer, _)| answer.ends_with("max_buffered_body_bytes"))
        .map(|(_, count)| count)
        .sum::<usize>();
    assert!(by_budget > 0, "the stalled bodies never filled the budget");

    // Once the attackers are gone, the budget is all given back.
    tokio::time::timeout(HANG_GUARD, async {
        while served.stats.buffered_body_bytes() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("hang guard: the budget was never given back");
    eprintln!("slowloris: RSS {} KiB after the attackers left", rss_kib());
}
