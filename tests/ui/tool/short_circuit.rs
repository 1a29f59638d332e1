#[mrtr::tool]
async fn pick(ready: bool) -> String {
    if ready && ask!(confirm("Sure?")).ok().unwrap_or(false) {
        return "go".into();
    }
    "wait".into()
}

fn main() {}
