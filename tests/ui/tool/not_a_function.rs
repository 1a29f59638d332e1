#[mrtr::tool]
struct Deploy;

fn main() {}
