#[mrtr::tool]
async fn pick() -> String {
    let parsed = "5".parse().unwrap();
    let env = ask!(choice("Where?", ["staging", "prod"])).ok().unwrap_or_default();
    format!("{} {env}", parsed)
}

fn main() {}
