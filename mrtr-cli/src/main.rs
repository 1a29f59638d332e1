//! `mrtr`: a terminal client for MCP servers that answers every question a call asks —
//! at the terminal, one prompt per question, or from an answers file when there is no TTY.
//!
//! ```sh
//! mrtr tools -- ./my-server
//! mrtr call deploy --args '{"service": "api"}' -- ./my-server
//! mrtr read secret://doc --url http://127.0.0.1:8080/mcp --answers answers.json
//! ```
//!
//! Exit codes: 0 done, 1 the tool reported an error, 2 declined or cancelled, 3 protocol or
//! connection error, 64 wrong command line (see `mrtr --help` and [`mrtr_cli::Exit`]).

mod cli;

use std::process::ExitCode;

use clap::Parser;
use cli::{Cli, Options, Target};
use mrtr_cli::{Action, Exit, Session, SessionOptions, describe_error};
use mrtr_runtime::client::DriverConfig;
use mrtr_runtime::token::{KEYS_ENV_VAR, SecretKey};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // --help and --version print and succeed; anything else is a usage error.
            let usage = error.use_stderr();
            let _ = error.print();
            return if usage { Exit::Usage } else { Exit::Done }.into();
        }
    };
    let (target, options, action) = cli.resolve();
    run(target, &options, &action).await.into()
}

async fn run(target: Target, options: &Options, action: &Action) -> Exit {
    let answers = match options.answers() {
        Ok(answers) => answers,
        Err(error) => {
            eprintln!("mrtr: {error}");
            return Exit::Usage;
        }
    };
    let session_options = SessionOptions {
        verbose: options.verbose,
        legacy: options.legacy,
        config: DriverConfig::default().with_max_rounds(options.max_rounds),
    };
    let session = match target {
        Target::Stdio(command) => {
            let transport = match child(&command) {
                Ok(transport) => transport,
                Err(error) => {
                    eprintln!("mrtr: {error}");
                    return Exit::Failed;
                }
            };
            Session::connect(transport, answers, session_options).await
        }
        Target::Http(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url);
            Session::connect(transport, answers, session_options).await
        }
    };
    let session = match session {
        Ok(session) => session,
        Err(error) => {
            eprintln!("mrtr: {}", describe_error(&error));
            return Exit::Failed;
        }
    };
    let exit = session.run(action).await;
    session.close().await;
    exit
}

/// Starts the server command as a child speaking on its stdin/stdout. It gets a sealing
/// key of its own when `MRTR_KEYS` is not set (an mrtr server would otherwise make one and
/// say so), and its own process group, so Ctrl-C reaches this client — which cancels the
/// call properly — and not the server.
fn child(command: &[String]) -> Result<TokioChildProcess, String> {
    let Some((program, arguments)) = command.split_first() else {
        return Err("no server command after `--`".into());
    };
    let mut child = tokio::process::Command::new(program);
    child.args(arguments);
    if std::env::var_os(KEYS_ENV_VAR).is_none()
        && let Ok(key) = SecretKey::generate()
    {
        child.env(KEYS_ENV_VAR, format!("1:{}", key.to_base64url()));
    }
    #[cfg(unix)]
    child.process_group(0);
    TokioChildProcess::new(child).map_err(|error| format!("cannot start `{program}`: {error}"))
}
