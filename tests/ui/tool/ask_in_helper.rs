use mrtr::prelude::*;

fn confirm_purge() -> bool {
    ask!(confirm("Purge?")).ok().unwrap_or(false)
}

#[mrtr::tool]
async fn purge() -> String {
    let _ = ask!(confirm("Really?"));
    confirm_purge().to_string()
}

fn main() {}
