use std::sync::Mutex;

#[mrtr::tool]
async fn count(start: u32) -> String {
    let counter = Mutex::new(start);
    let mut guard = counter.lock().unwrap();
    let more = ask!(confirm("One more?")).ok().unwrap_or(false);
    if more {
        *guard += 1;
    }
    format!("{}", *guard)
}

fn main() {}
