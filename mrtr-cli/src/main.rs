//! `mrtr`: a terminal client for MCP 2026-07-28 servers that answers every
//! `input_required` round — interactively, or from an answers file when there is no TTY.
//!
//! ```sh
//! mrtr stdio --call deploy --args '{"service": "api"}' -- ./my-server --flag
//! mrtr http http://127.0.0.1:8080/mcp --list
//! mrtr http http://127.0.0.1:8080/mcp --read secret://doc --answers answers.json
//! ```

use std::{io::IsTerminal, path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};
use mrtr_cli::{Action, AnswerOptions, AnswerScript, SampleSource, TerminalAnswers};
use mrtr_runtime::client::{ClientError, DriverConfig, MrtrClient};
use mrtr_runtime::error::ErrorChain;
use rmcp::{
    model::JsonObject,
    transport::{StreamableHttpClientTransport, TokioChildProcess},
};

/// Talk to an MCP 2026-07-28 server and answer its questions (elicitation, sampling, roots).
#[derive(Debug, Parser)]
#[command(name = "mrtr", version)]
struct Cli {
    #[command(subcommand)]
    transport: Transport,
}

#[derive(Debug, Subcommand)]
enum Transport {
    /// Run the server as a child process and speak over its stdin/stdout.
    Stdio {
        #[command(flatten)]
        options: Options,
        /// The server command and its arguments (after `--`).
        #[arg(last = true, required = true, num_args = 1..)]
        command: Vec<String>,
    },
    /// Speak Streamable HTTP to a server URL.
    Http {
        /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
        url: String,
        #[command(flatten)]
        options: Options,
    },
}

#[derive(Debug, Args)]
struct Options {
    /// List tools, prompts and resources (the default when nothing else is asked).
    #[arg(long, conflicts_with_all = ["call", "prompt", "read"])]
    list: bool,
    /// Call this tool.
    #[arg(long, value_name = "TOOL", conflicts_with_all = ["prompt", "read"])]
    call: Option<String>,
    /// Get this prompt.
    #[arg(long, value_name = "PROMPT", conflicts_with = "read")]
    prompt: Option<String>,
    /// Read this resource.
    #[arg(long, value_name = "URI")]
    read: Option<String>,
    /// Arguments for --call or --prompt, as a JSON object.
    #[arg(long, value_name = "JSON", value_parser = parse_object)]
    args: Option<JsonObject>,
    /// Answer elicitations from this JSON file instead of asking (see `mrtr_cli::AnswerScript`).
    #[arg(long, value_name = "FILE")]
    answers: Option<PathBuf>,
    /// A directory to offer as a root (repeatable; default: the current directory).
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Answer sampling requests with this text.
    #[arg(long, value_name = "TEXT", conflicts_with = "sample_command")]
    sample_reply: Option<String>,
    /// Answer sampling requests with the stdout of this shell command (request JSON on stdin).
    #[arg(long, value_name = "CMD")]
    sample_command: Option<String>,
    /// Open the session with `initialize` at 2025-11-25, for servers that predate MRTR:
    /// they ask by sending requests mid-call, answered the same way.
    #[arg(long)]
    legacy: bool,
    /// Most requests per call, the first included.
    #[arg(long, default_value_t = 10)]
    max_rounds: usize,
}

fn parse_object(text: &str) -> Result<JsonObject, String> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err("must be a JSON object".into()),
        Err(error) => Err(format!("not JSON: {error}")),
    }
}

impl Options {
    fn action(&self) -> Action {
        if let Some(name) = &self.call {
            Action::CallTool {
                name: name.clone(),
                arguments: self.args.clone(),
            }
        } else if let Some(name) = &self.prompt {
            Action::GetPrompt {
                name: name.clone(),
                arguments: self.args.clone(),
            }
        } else if let Some(uri) = &self.read {
            Action::ReadResource { uri: uri.clone() }
        } else {
            Action::List
        }
    }

    fn answers(&self) -> Result<TerminalAnswers, String> {
        let options = AnswerOptions {
            roots: self.roots.clone(),
            sample: match (&self.sample_reply, &self.sample_command) {
                (Some(text), _) => Some(SampleSource::Reply(text.clone())),
                (None, Some(command)) => Some(SampleSource::Command(command.clone())),
                (None, None) => None,
            },
        };
        match &self.answers {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
                Ok(TerminalAnswers::scripted(
                    AnswerScript::from_json(&text)?,
                    options,
                ))
            }
            None if std::io::stdin().is_terminal() => Ok(TerminalAnswers::interactive(options)),
            None => Ok(TerminalAnswers::unattended(options)),
        }
    }
}

async fn session(client: Result<MrtrClient, ClientError>, options: &Options) -> Result<(), String> {
    let client = client
        .map_err(|error| ErrorChain(&error).to_string())?
        .with_config(DriverConfig::default().with_max_rounds(options.max_rounds));
    let outcome = mrtr_cli::run(&client, &options.action()).await;
    client.close().await;
    outcome.map_err(|error| match error.pending() {
        Some(pending) => format!(
            "{}\npending call (resumable): {}",
            ErrorChain(&error),
            serde_json::to_string(pending).unwrap_or_default()
        ),
        None => ErrorChain(&error).to_string(),
    })
}

async fn connect<T, E, A>(
    transport: T,
    answers: TerminalAnswers,
    options: &Options,
) -> Result<MrtrClient, ClientError>
where
    T: mrtr_runtime::rmcp::transport::IntoTransport<mrtr_runtime::rmcp::RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    if options.legacy {
        mrtr_cli::connect_legacy(transport, answers).await
    } else {
        mrtr_cli::connect(transport, answers).await
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.transport {
        Transport::Stdio { options, command } => match options.answers() {
            Err(error) => Err(error),
            Ok(answers) => {
                let mut child = tokio::process::Command::new(&command[0]);
                child.args(&command[1..]);
                match TokioChildProcess::new(child) {
                    Err(error) => Err(format!("cannot start `{}`: {error}", command[0])),
                    Ok(transport) => {
                        session(connect(transport, answers, options).await, options).await
                    }
                }
            }
        },
        Transport::Http { url, options } => match options.answers() {
            Err(error) => Err(error),
            Ok(answers) => {
                let transport = StreamableHttpClientTransport::from_uri(url.clone());
                session(connect(transport, answers, options).await, options).await
            }
        },
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mrtr: {error}");
            ExitCode::FAILURE
        }
    }
}
