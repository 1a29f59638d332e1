use std::sync::Arc;

struct Pool;

#[mrtr::tool]
async fn purge(pool: Arc<Pool>, table: String) -> String {
    let _ = (pool, ask!(confirm("Purge?")));
    table
}

fn main() {}
