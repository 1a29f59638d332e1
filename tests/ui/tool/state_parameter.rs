use std::sync::Arc;

use mrtr::State;

struct Pool;

#[mrtr::tool]
async fn purge(mut pool: State<Arc<Pool>>, table: String) -> String {
    let _ = ask!(confirm("Purge?"));
    let _ = &mut pool;
    table
}

#[mrtr::tool]
async fn vacuum(State((a, b)): State<(u8, u8)>) -> String {
    let _ = ask!(confirm("Vacuum?"));
    format!("{a}{b}")
}

fn main() {}
