#[mrtr::tool]
async fn pick() -> String {
    let ask_later = || ask!(text("Name?"));
    format!("{:?}", ask_later())
}

fn main() {}
