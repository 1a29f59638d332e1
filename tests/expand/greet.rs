/// Greets someone by name.
#[mrtr::tool]
async fn greet(greeting: String) -> Result<String, ToolError> {
    let name = ask!(text("Your name?")).accepted()?;
    Ok(format!("{greeting}, {name}!"))
}
