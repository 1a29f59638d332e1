mod machine_support;

use machine_support::*;
use mrtr::machine::ToolError;
use serde_json::json;

/// Greets someone.
#[mrtr::tool]
async fn greet(greeting: String) -> Result<String, ToolError> {
    let name = ask!(text("Your name?")).accepted()?;
    let mut shout = false;
    if ask!(confirm("Shout?")).accepted()? {
        shout = true;
    }
    let line = format!("{greeting}, {name}!");
    Ok(if shout { line.to_uppercase() } else { line })
}

#[tokio::test]
async fn greets() {
    let flow = drive(
        &greet,
        json!({"greeting": "Hello"}),
        |key, _, round| match round {
            0 => accept(json!({"text": "Ada"})),
            _ => {
                let _ = key;
                accept(json!({"confirm": true}))
            }
        },
    )
    .await
    .unwrap();
    assert_eq!(text(&flow.output), "HELLO, ADA!");
    assert_eq!(flow.rounds.len(), 2);
}
