struct Connection;

impl Connection {
    fn name(&self) -> &str {
        "db"
    }
}

#[mrtr::tool]
async fn pick() -> String {
    let connection = Connection;
    let env = ask!(choice("Where?", ["staging", "prod"])).ok().unwrap_or_default();
    format!("{} {env}", connection.name())
}

fn main() {}
