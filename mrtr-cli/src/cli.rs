//! The `mrtr` command line (clap): what to do, which server, and where answers come from.

use std::{io::IsTerminal, path::PathBuf};

use clap::{Args, Parser, Subcommand};
use mrtr_cli::{Action, AnswerOptions, AnswerScript, SampleSource, TerminalAnswers};
use rmcp::model::JsonObject;

const AFTER_HELP: &str = "\
Examples:
  mrtr tools -- ./my-server                    list the tools and their arguments
  mrtr call deploy --args '{\"service\": \"api\"}' -- ./my-server
  mrtr call deploy --url http://127.0.0.1:8080/mcp
  mrtr prompts --url http://127.0.0.1:8080/mcp
  mrtr read secret://doc --url http://127.0.0.1:8080/mcp --answers answers.json
  mrtr call order_food --sample-reply 'Two pad thai, please' -- ./showcase serve-stdio
  mrtr call deploy --legacy -- ./older-server  a server that only speaks 2025-11-25

At a terminal every question is one prompt: Enter answers, Esc declines the question,
Ctrl-C cancels the whole call (a call running as a task is cancelled on the server too).
Required arguments left out of --args are asked for. Without a terminal, answers come
from --answers FILE.

Exit codes:
  0   done
  1   the tool, prompt or resource reported an error (or the server refused the call)
  2   a question was declined, or the call was cancelled
  3   protocol or connection error (could not start or reach the server, lost it, or it
      sent something invalid)
  64  the command line is wrong or incomplete";

/// Talk to an MCP server (2026-07-28, or 2025-11-25 with --legacy) and answer its
/// questions: forms, URL consent, sampling and roots.
#[derive(Debug, Parser)]
#[command(name = "mrtr", version, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the tools, with their arguments and what each may ask for.
    Tools {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        options: Options,
    },
    /// List the prompts, with their arguments.
    Prompts {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        options: Options,
    },
    /// List the resources and resource templates.
    Resources {
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        options: Options,
    },
    /// Call a tool and answer its questions.
    Call {
        /// The tool's name (`mrtr tools` lists them).
        tool: String,
        #[command(flatten)]
        arguments: Arguments,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        options: Options,
    },
    /// Get a prompt and answer its questions.
    Prompt {
        /// The prompt's name (`mrtr prompts` lists them).
        name: String,
        #[command(flatten)]
        arguments: Arguments,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        options: Options,
    },
    /// Read a resource and answer its questions.
    Read {
        /// The resource's URI (`mrtr resources` lists them).
        uri: String,
        #[command(flatten)]
        server: Server,
        #[command(flatten)]
        options: Options,
    },
    /// The same with the server first: a child process on stdio
    /// (`mrtr stdio --call deploy -- ./my-server`).
    Stdio {
        #[command(flatten)]
        what: OldAction,
        #[command(flatten)]
        options: Options,
        /// The server command and its arguments (after `--`).
        #[arg(last = true, required = true, num_args = 1..)]
        command: Vec<String>,
    },
    /// The same with the server first: a Streamable HTTP endpoint
    /// (`mrtr http http://127.0.0.1:8080/mcp --call deploy`).
    Http {
        /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
        url: String,
        #[command(flatten)]
        what: OldAction,
        #[command(flatten)]
        options: Options,
    },
}

/// Which server: a URL, or the command that starts it (after `--`).
#[derive(Debug, Args)]
struct Server {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// The command that starts the server on stdio, after `--`.
    #[arg(
        last = true,
        num_args = 1..,
        value_name = "SERVER_COMMAND",
        required_unless_present = "url"
    )]
    command: Vec<String>,
}

#[derive(Debug, Args)]
struct Arguments {
    /// The arguments as a JSON object; required ones left out are asked for at a terminal.
    #[arg(long, value_name = "JSON", value_parser = parse_object)]
    args: Option<JsonObject>,
}

/// `stdio` and `http`: the action as flags.
#[derive(Debug, Args)]
struct OldAction {
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
    #[command(flatten)]
    arguments: Arguments,
}

#[derive(Debug, Args)]
pub struct Options {
    /// Answer from this file instead of asking. It is JSON: "byKey" maps a question's key
    /// to its answer (a list answers the same key round after round), "inOrder" lists the
    /// answers for every other question. An answer is "accept", "decline", "cancel", or
    /// {"action": "accept", "content": {"field": value, ...}}; content is checked against
    /// the question's form before it is sent.
    #[arg(long, value_name = "FILE")]
    answers: Option<PathBuf>,
    /// Share this directory with the server as a root (repeatable). Without it a terminal
    /// asks before sharing the current directory, and a run without one shares none.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Answer sampling (the server asking for a model's reply) with this text. At a
    /// terminal you type the reply yourself otherwise.
    #[arg(long, value_name = "TEXT", conflicts_with = "sample_command")]
    sample_reply: Option<String>,
    /// Answer sampling with the stdout of this shell command (the request JSON on its stdin).
    #[arg(long, value_name = "CMD")]
    sample_command: Option<String>,
    /// Offer no sampling, even at a terminal: a tool that needs it is refused before the call.
    #[arg(long, conflicts_with_all = ["sample_reply", "sample_command"])]
    no_sampling: bool,
    /// Speak MCP 2025-11-25 (`initialize`) to a server that predates 2026-07-28: it asks
    /// its questions mid-call, answered the same way.
    #[arg(long)]
    pub legacy: bool,
    /// Print the protocol transcript: each round's questions and answers, the requestState
    /// size, task statuses.
    #[arg(short, long)]
    pub verbose: bool,
    /// Most requests per call, the first included.
    #[arg(long, default_value_t = 10)]
    pub max_rounds: usize,
}

fn parse_object(text: &str) -> Result<JsonObject, String> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err("must be a JSON object, e.g. '{\"service\": \"api\"}'".into()),
        Err(error) => Err(format!("not JSON: {error}")),
    }
}

/// Where the server is.
#[derive(Debug)]
pub enum Target {
    /// A child process on stdio: the command and its arguments.
    Stdio(Vec<String>),
    /// A Streamable HTTP endpoint.
    Http(String),
}

impl Server {
    fn target(self) -> Target {
        match self.url {
            Some(url) => Target::Http(url),
            None => Target::Stdio(self.command),
        }
    }
}

impl OldAction {
    fn action(self) -> Action {
        let arguments = self.arguments.args;
        if let Some(name) = self.call {
            Action::CallTool { name, arguments }
        } else if let Some(name) = self.prompt {
            Action::GetPrompt { name, arguments }
        } else if let Some(uri) = self.read {
            Action::ReadResource { uri }
        } else {
            Action::List
        }
    }
}

impl Cli {
    /// The server, the options and the action the command line asks for.
    pub fn resolve(self) -> (Target, Options, Action) {
        match self.command {
            Command::Tools { server, options } => (server.target(), options, Action::ListTools),
            Command::Prompts { server, options } => (server.target(), options, Action::ListPrompts),
            Command::Resources { server, options } => {
                (server.target(), options, Action::ListResources)
            }
            Command::Call {
                tool,
                arguments,
                server,
                options,
            } => (
                server.target(),
                options,
                Action::CallTool {
                    name: tool,
                    arguments: arguments.args,
                },
            ),
            Command::Prompt {
                name,
                arguments,
                server,
                options,
            } => (
                server.target(),
                options,
                Action::GetPrompt {
                    name,
                    arguments: arguments.args,
                },
            ),
            Command::Read {
                uri,
                server,
                options,
            } => (server.target(), options, Action::ReadResource { uri }),
            Command::Stdio {
                what,
                options,
                command,
            } => (Target::Stdio(command), options, what.action()),
            Command::Http { url, what, options } => (Target::Http(url), options, what.action()),
        }
    }
}

impl Options {
    /// Where answers come from: the answers file, the terminal, or nowhere (a question then
    /// fails with a hint to pass --answers).
    pub fn answers(&self) -> Result<TerminalAnswers, String> {
        let at_terminal = self.answers.is_none() && std::io::stdin().is_terminal();
        let sample = match (&self.sample_reply, &self.sample_command) {
            (Some(text), _) => Some(SampleSource::Reply(text.clone())),
            (None, Some(command)) => Some(SampleSource::Command(command.clone())),
            (None, None) if at_terminal && !self.no_sampling => Some(SampleSource::Ask),
            (None, None) => None,
        };
        let options = AnswerOptions {
            roots: self.roots.clone(),
            sample,
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
            None if at_terminal => Ok(TerminalAnswers::interactive(options)),
            None => Ok(TerminalAnswers::unattended(options)),
        }
    }
}
