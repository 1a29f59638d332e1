#[mrtr::tool(scopes = "deploy")]
async fn not_an_array() -> String {
    String::new()
}

#[mrtr::tool(scopes = ["deploy", 7, "two words", ""])]
async fn bad_elements() -> String {
    String::new()
}

#[mrtr::prompt(scopes = ["deploy"])]
async fn prompts_take_none() -> String {
    String::new()
}

fn main() {}
