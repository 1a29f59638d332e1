#[mrtr::tool]
async fn pick() -> String {
    let mut rounds = 0;
    while ask!(confirm("Again?")).ok().unwrap_or(false) {
        rounds += 1;
    }
    rounds.to_string()
}

fn main() {}
