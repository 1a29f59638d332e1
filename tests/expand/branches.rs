/// Branches on an answer, with shadowing.
#[mrtr::prompt(name = "pick")]
async fn pick(topic: String) -> String {
    let choice = match ask!(choice("Which?", ["a", "b"])) {
        Elicited::Accept(choice) => choice,
        _ => return "none".to_string(),
    };
    let choice = if choice == "a" {
        ask!(key = "detail", text("Detail?")).ok().unwrap_or_default()
    } else {
        choice
    };
    format!("{topic}: {choice}")
}
