#[mrtr::tool]
async fn shout(prefix: String) -> String {
    let loud = |s: &str| format!("{prefix}{}", s.to_uppercase());
    let word = ask!(text("A word?")).ok().unwrap_or_default();
    loud(&word)
}

fn main() {}
