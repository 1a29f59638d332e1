#[mrtr::tool]
async fn pick() -> String {
    fn helper() -> String {
        ask!(text("Name?")).ok().unwrap_or_default()
    }
    helper()
}

fn main() {}
