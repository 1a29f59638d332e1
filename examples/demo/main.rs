//! The demo: starts the showcase server in-process on 127.0.0.1 and runs the terminal
//! client against it. On a TTY you answer the server's questions yourself; without one the
//! answers come from `examples/demo/answers.json` and the transcript shows every round.
//!
//! ```sh
//! cargo run --example demo                    # the deploy wizard
//! cargo run --example demo -- --flow order    # order | organise | explain | vault
//! cargo run --example demo < /dev/null        # scripted answers, transcript only
//! ```

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

#[path = "../showcase/data_export.rs"]
mod data_export;
#[path = "../showcase/deploy_wizard.rs"]
mod deploy_wizard;
#[path = "../showcase/explain_prompt.rs"]
mod explain_prompt;
#[path = "../showcase/file_organiser.rs"]
mod file_organiser;
#[path = "../showcase/order_flow.rs"]
mod order_flow;
#[path = "../showcase/server.rs"]
mod server;
#[path = "../showcase/vault_resource.rs"]
mod vault_resource;

use std::io::IsTerminal as _;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use futures::future::BoxFuture;
use mrtr::client::{
    DriverConfig, FormElicitation, HandlerError, InputHandler, InputKinds, RootsRequest,
    SamplingRequest, UrlElicitation,
};
use mrtr::rmcp::model::{CreateMessageResult, ElicitResult, ListRootsResult};
use mrtr::rmcp::transport::StreamableHttpClientTransport;
use mrtr::token::{KeyId, KeyRing, SecretKey};
use mrtr_cli::{
    Action, AnswerOptions, AnswerScript, SampleSource, Session, SessionOptions, TerminalAnswers,
};
use serde_json::json;

/// The scripted answers used when there is no TTY.
const SCRIPTED_ANSWERS: &str = include_str!("answers.json");

#[derive(Parser)]
#[command(
    about = "mrtr demo: a multi-round MCP flow, answered by you (or by a script without a TTY)"
)]
struct Cli {
    /// Which flow to run.
    #[arg(long, value_enum, default_value_t = Flow::Deploy)]
    flow: Flow,
    /// Answer from this JSON file instead of the terminal (see `mrtr_cli::AnswerScript`).
    #[arg(long, value_name = "FILE")]
    answers: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Flow {
    /// `deploy_wizard`: environment, a confirmation that depends on it, a version re-asked until valid.
    Deploy,
    /// `order_food`: dishes in a loop, a confirmation, a kitchen note from the (scripted) model.
    Order,
    /// `organise_files`: roots, then proposed moves (a throwaway folder of sample files is the root).
    Organise,
    /// The `explain` prompt, which asks for its topic.
    Explain,
    /// The `vault://team/keys` resource, which needs URL consent.
    Vault,
}

/// Scripted answers plus a stand-in for the user's browser: before answering a URL
/// elicitation it opens the page and presses its button (the vault's approval page
/// records the approval out of band; `accept` alone proves nothing).
struct ScriptedBrowser(TerminalAnswers);

impl InputHandler for ScriptedBrowser {
    fn supported(&self) -> InputKinds {
        self.0.supported()
    }

    fn elicit(
        &self,
        request: FormElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        self.0.elicit(request)
    }

    fn elicit_url(
        &self,
        request: UrlElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            println!("   (browser) POST {}", request.url);
            reqwest::Client::new()
                .post(&request.url)
                .send()
                .await
                .map_err(|error| HandlerError::failed(error.to_string()))?;
            self.0.elicit_url(request).await
        })
    }

    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        self.0.sample(request)
    }

    fn list_roots(
        &self,
        request: RootsRequest,
    ) -> BoxFuture<'_, Result<ListRootsResult, HandlerError>> {
        self.0.list_roots(request)
    }
}

/// A throwaway folder with a few loose files, offered as the client's root.
fn sample_workspace() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("mrtr-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    for name in ["invoice.pdf", "holiday.jpg", "notes.md", "backup.tar"] {
        std::fs::write(dir.join(name), b"demo")?;
    }
    Ok(dir)
}

#[tokio::main]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let cli = Cli::parse();
    let workspace = match cli.flow {
        Flow::Organise => Some(sample_workspace()?),
        _ => None,
    };
    // The organiser only looks inside the directories the server allows: here, the
    // throwaway workspace this demo offers as the client's root.
    let allowed = match &workspace {
        Some(dir) => file_organiser::AllowedRoots::new([dir.clone()])?,
        None => file_organiser::AllowedRoots::demo()?,
    };
    // A key of its own, so the server seals with it and has nothing to say about keys.
    let keys = KeyRing::new(KeyId(1), SecretKey::generate()?);
    let showcase = server::showcase_server_keyed(allowed, Some(keys))?;
    let (addr, server_task) =
        server::serve_server("127.0.0.1:0".parse()?, showcase, |serving| serving).await?;
    let url = format!("http://{addr}/mcp");

    let options = AnswerOptions {
        roots: workspace.iter().cloned().collect(),
        sample: Some(SampleSource::Reply(
            "Two pad thai and a tiramisu, all for table four — thanks, kitchen!".into(),
        )),
    };
    let (answers, source, scripted) = match &cli.answers {
        Some(path) => {
            let text = std::fs::read_to_string(path)?;
            let script = AnswerScript::from_json(&text).map_err(anyhow::Error::msg)?;
            (
                TerminalAnswers::scripted(script, options),
                path.display().to_string(),
                true,
            )
        }
        None if std::io::stdin().is_terminal() => (
            TerminalAnswers::interactive(options),
            "you, at this terminal".to_string(),
            false,
        ),
        None => {
            let script = AnswerScript::from_json(SCRIPTED_ANSWERS).map_err(anyhow::Error::msg)?;
            (
                TerminalAnswers::scripted(script, options),
                "examples/demo/answers.json (no TTY)".to_string(),
                true,
            )
        }
    };

    let action = match cli.flow {
        Flow::Deploy => Action::CallTool {
            name: "deploy_wizard".into(),
            arguments: json!({"service": "api"}).as_object().cloned(),
        },
        Flow::Order => Action::CallTool {
            name: "order_food".into(),
            arguments: json!({"customer": "table four"}).as_object().cloned(),
        },
        Flow::Organise => Action::CallTool {
            name: "organise_files".into(),
            arguments: None,
        },
        Flow::Explain => Action::GetPrompt {
            name: "explain".into(),
            arguments: None,
        },
        Flow::Vault => Action::ReadResource {
            uri: "vault://team/keys".into(),
        },
    };
    println!("mrtr demo — showcase server on {url} (stateless Streamable HTTP)");
    println!("answers from: {source}");
    match &action {
        Action::CallTool { name, arguments } => println!(
            "calling tools/call {name} {}",
            serde_json::to_string(arguments).unwrap_or_default()
        ),
        Action::GetPrompt { name, .. } => println!("calling prompts/get {name}"),
        Action::ReadResource { uri } => println!("calling resources/read {uri}"),
        _ => {}
    }

    let transport = StreamableHttpClientTransport::from_uri(url);
    // The demo keeps the protocol transcript: showing the rounds is its point.
    let session_options = SessionOptions {
        verbose: true,
        legacy: false,
        config: DriverConfig::default(),
    };
    let session = if scripted {
        // Without a person at a browser, the script visits the approval page itself.
        let signals = answers.signals();
        Session::connect_with(
            transport,
            ScriptedBrowser(answers),
            signals,
            session_options,
        )
        .await?
    } else {
        Session::connect(transport, answers, session_options).await?
    };
    let exit = session.run(&action).await;
    session.close().await;
    server_task.abort();
    if let Some(dir) = workspace {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(exit.into())
}
