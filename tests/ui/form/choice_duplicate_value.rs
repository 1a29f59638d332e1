#[derive(mrtr::FormChoice, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Env {
    Prod,
    #[serde(rename = "prod")]
    Production,
}

fn main() {}
