//! Legacy clients through the scale-out cluster: rmcp's own client at 2025-11-25 (a
//! Streamable HTTP session opened with `initialize`) drives the three-question `steps` tool
//! through nginx, answering each question as a real `elicitation/create`.
//!
//! ```sh
//! cluster-legacy --url http://127.0.0.1:18080/mcp --clients 6 --flows 2 --prefix L
//! cluster-legacy --url http://127.0.0.1:18080/mcp --clients 6 --flows 2 --prefix K \
//!     --between "scripts/cluster kill-node 2" --killed n2
//! ```
//! Each client runs `--flows` flows one after another on its one session. With
//! `--between`, every client runs its first flow, then the command runs (e.g. a node is
//! killed), then every client runs the rest: a client whose session lived on the `--killed`
//! node must get "session not found" (404), re-initialize on another node and complete its
//! flows there, not hang. Prints a one-line JSON summary; exits non-zero when a flow failed
//! or (with `--killed`) no client had its session on that node or one was not moved.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use mrtr::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProtocolVersion,
};
use mrtr::rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use mrtr::rmcp::transport::StreamableHttpClientTransport;
use mrtr::rmcp::{ClientHandler, ErrorData, RoleClient};
use mrtr_bench::cluster::{FlowResult, INSTANCE_META_KEY, TOOL_NAME, answer};
use serde_json::json;

#[derive(Parser)]
#[command(about = "Drive the cluster's `steps` tool with rmcp's client at 2025-11-25")]
struct Args {
    /// The MCP endpoint (nginx in front of the nodes).
    #[arg(long)]
    url: String,
    /// Concurrent clients, one session each.
    #[arg(long, default_value_t = 6)]
    clients: usize,
    /// Flows each client runs, one after another.
    #[arg(long, default_value_t = 2)]
    flows: usize,
    /// Flow id prefix (flow ids are `{prefix}-{client}-{flow}`).
    #[arg(long, default_value = "legacy")]
    prefix: String,
    /// A shell command run once every client has finished its first flow.
    #[arg(long)]
    between: Option<String>,
    /// The instance `--between` takes down: clients whose first flow ran there must finish
    /// the rest elsewhere.
    #[arg(long)]
    killed: Option<String>,
    /// Bound on each flow, in seconds (a hang is a failure, not a wait).
    #[arg(long, default_value_t = 60)]
    flow_timeout: u64,
}

/// Answers each question of the flow it is running.
#[derive(Clone, Default)]
struct Answerer {
    flow: Arc<Mutex<String>>,
}

impl ClientHandler for Answerer {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("capabilities");
        ClientConfig::new(capabilities, Implementation::new("cluster-legacy", "0.0.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let field = requested_schema
            .properties
            .keys()
            .next()
            .cloned()
            .unwrap_or_default();
        let flow = self.flow.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({ field: answer(&flow, &message) })))
    }
}

/// One flow's outcome: the instance that ran its last round, or the error.
type Outcome = Result<String, String>;

async fn flow(
    client: &RunningService<RoleClient, Answerer>,
    answerer: &Answerer,
    id: &str,
    timeout: Duration,
) -> Outcome {
    *answerer.flow.lock().unwrap_or_else(|e| e.into_inner()) = id.to_owned();
    let params = CallToolRequestParams::new(TOOL_NAME).with_arguments(
        json!({ "flow": id })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let result = tokio::time::timeout(timeout, client.call_tool(params))
        .await
        .map_err(|_| format!("{id}: no answer within {} s", timeout.as_secs()))?
        .map_err(|error| format!("{id}: {error}"))?;
    if result.is_error == Some(true) {
        return Err(format!("{id}: tool error {:?}", result.content));
    }
    let text: String = result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect();
    let parsed: FlowResult =
        serde_json::from_str(&text).map_err(|error| format!("{id}: result {text}: {error}"))?;
    parsed.check(id).map_err(|error| format!("{id}: {error}"))?;
    Ok(result
        .meta
        .as_ref()
        .and_then(|meta| meta.get(INSTANCE_META_KEY))
        .and_then(|value| value.as_str())
        .unwrap_or("?")
        .to_owned())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let timeout = Duration::from_secs(args.flow_timeout);
    let mut clients = Vec::new();
    for index in 0..args.clients {
        let answerer = Answerer::default();
        let transport = StreamableHttpClientTransport::from_uri(args.url.clone());
        let client = match answerer
            .clone()
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
        {
            Ok(client) => client,
            Err(error) => {
                eprintln!("cluster-legacy: client {index} cannot initialize: {error}");
                return ExitCode::FAILURE;
            }
        };
        clients.push((index, answerer, client));
    }
    let run = |from: usize, to: usize| {
        let clients = &clients;
        let prefix = &args.prefix;
        async move {
            futures::future::join_all(clients.iter().map(|(index, answerer, client)| async move {
                let mut outcomes = Vec::new();
                for number in from..to {
                    let id = format!("{prefix}-{index}-{number}");
                    outcomes.push(flow(client, answerer, &id, timeout).await);
                }
                outcomes
            }))
            .await
        }
    };
    let split = if args.between.is_some() {
        1
    } else {
        args.flows
    };
    let first = run(0, split.min(args.flows)).await;
    if let Some(command) = &args.between {
        let status = std::process::Command::new("sh")
            .args(["-c", command])
            .status();
        if !status.is_ok_and(|status| status.success()) {
            eprintln!("cluster-legacy: `{command}` failed");
            return ExitCode::FAILURE;
        }
    }
    let rest = run(split.min(args.flows), args.flows).await;

    let mut failed = Vec::new();
    let mut per_instance = BTreeMap::<String, usize>::new();
    let (mut on_killed, mut moved) = (0, 0);
    for (before, after) in first.iter().zip(&rest) {
        for outcome in before.iter().chain(after) {
            match outcome {
                Ok(instance) => *per_instance.entry(instance.clone()).or_default() += 1,
                Err(error) => failed.push(error.clone()),
            }
        }
        if let (Some(killed), Some(Ok(was))) = (&args.killed, before.last())
            && was == killed
        {
            on_killed += 1;
            if !after.is_empty()
                && after
                    .iter()
                    .all(|outcome| outcome.as_ref().is_ok_and(|now| now != killed))
            {
                moved += 1;
            }
        }
    }
    for (_, _, client) in clients {
        let _ = client.cancel().await;
    }
    let completed: usize = per_instance.values().sum();
    println!(
        "{}",
        json!({
            "clients": args.clients,
            "flows_completed": completed,
            "failed": failed.len(),
            "flows_per_instance": per_instance,
            "clients_on_killed_node": on_killed,
            "clients_moved_off_it": moved,
        })
    );
    for error in failed.iter().take(5) {
        eprintln!("cluster-legacy: {error}");
    }
    let killed_ok = args.killed.is_none() || (on_killed > 0 && moved == on_killed);
    if failed.is_empty() && killed_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
