#[mrtr::tool]
async fn pick(service: String) -> String {
    let names = vec![service.clone()];
    let first = &names[0];
    let env = ask!(choice("Where?", ["staging", "prod"])).ok().unwrap_or_default();
    format!("{first} {env}")
}

fn main() {}
