#[mrtr::tool]
async fn pick() -> String {
    format!("Hello {:?}", ask!(text("Name?")))
}

fn main() {}
