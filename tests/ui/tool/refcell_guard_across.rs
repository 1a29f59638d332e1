use std::cell::RefCell;

#[mrtr::tool]
async fn tally(first: String) -> String {
    let votes = RefCell::new(vec![first]);
    let list = votes.borrow();
    let who = ask!(text("Who votes?")).ok().unwrap_or_default();
    format!("{} {who}", list.len())
}

fn main() {}
