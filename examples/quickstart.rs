//! The smallest `mrtr` server and client in one file: a tool that asks two questions in the
//! middle of its call, served over Streamable HTTP on 127.0.0.1, and a client that answers.
//!
//! ```sh
//! cargo run --example quickstart
//! ```

use mrtr::client::{InputHandlers, MrtrClient};
use mrtr::machine::{Elicited, ToolError};
use mrtr::rmcp::model::{ElicitResult, ElicitationAction};
use mrtr::server::{McpServer, http::HttpServing};
use serde_json::json;

/// Greet someone: asks their name, then whether to be formal.
#[mrtr::tool]
async fn greet(
    /// How to greet, e.g. "Good morning".
    greeting: String,
) -> Result<String, ToolError> {
    let name = ask!(text("What is your name?").title("Name")).accepted()?;
    let formal = ask!(confirm(format!("Shall I be formal, {name}?"))) == Elicited::Accept(true);
    Ok(if formal {
        format!("{greeting}, dear {name}.")
    } else {
        format!("{greeting}, {name}!")
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The server: one tool, Streamable HTTP with the production defaults, on a free port.
    let server = McpServer::builder("quickstart").tool(greet).build()?;
    let bound = HttpServing::new(server)
        .bind("127.0.0.1:0".parse()?)
        .await?;
    let url = format!("http://{}/mcp", bound.local_addr());
    tokio::spawn(bound.serve());

    // The client: answers each question as a person would.
    let person = InputHandlers::new().on_elicit(|question| async move {
        let answer = match question.message.as_str() {
            "What is your name?" => json!({"text": "Ada"}),
            _ => json!({"confirm": true}),
        };
        println!("server asks: {}\nperson says: {answer}", question.message);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(answer))
    });
    let client = MrtrClient::connect_http(url, person).await?;
    let arguments = json!({"greeting": "Good morning"}).as_object().cloned();
    let result = client.call_tool("greet", arguments).await?;
    for text in result.content.iter().filter_map(|block| block.as_text()) {
        println!("result: {}", text.text);
    }
    Ok(())
}
