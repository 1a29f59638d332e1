#[mrtr::tool]
async fn pick() -> String {
    let x = String::from("outer");
    loop {
        let answer = ask!(text("Again?")).ok().unwrap_or_default();
        if let Some(x) = answer.strip_prefix("stop:") {
            let _ = x;
            break;
        }
    }
    x
}

fn main() {}
