#[mrtr::tool(task = "sometimes")]
async fn unknown_support() -> String {
    String::new()
}

#[mrtr::tool(task = "optional", task_after = "one")]
async fn rounds_not_a_number() -> String {
    String::new()
}

#[mrtr::tool(task_after = 1)]
async fn rounds_without_task() -> String {
    String::new()
}

#[mrtr::prompt(task = "optional")]
async fn prompt_as_task() -> String {
    String::new()
}

fn main() {}
