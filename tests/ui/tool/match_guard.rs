#[mrtr::tool]
async fn pick(n: u32) -> String {
    match n {
        0 if ask!(confirm("Zero ok?")).is_accepted() => "zero".into(),
        _ => "other".into(),
    }
}

fn main() {}
