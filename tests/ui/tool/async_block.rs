#[mrtr::tool]
async fn pick() -> String {
    let later = async { ask!(text("Name?")) };
    format!("{:?}", later.await)
}

fn main() {}
